// See task_calls.h.
#include "producer/task_calls.h"

#include "base/errors.h"
#include "base/text_escape.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "io/sync/sync_connection.h"

namespace expiry {

void check_task_id(const std::string& id) {
  if (auto err = task_id_error(id)) throw ConfigError(*err);
}

void check_task(const Task& task, const std::string& ns) {
  if (auto err = task_error(task)) {
    throw ConfigError(*err + (task.id.empty() ? "" : " (task id '" + escape_text(task.id) + "')"));
  }
  if (!task.stream.empty()) {
    if (auto err = stream_name_error(task.stream, ns)) throw ConfigError(*err);
  }
}

ScheduleResult schedule_reply_result(const Reply& reply) {
  expect_ok(reply, "FCALL expiry_schedule");
  const auto result = decode_schedule(reply);
  if (!result) throw ReplyError("FCALL expiry_schedule: unexpected reply " + reply.describe());
  return *result;
}

bool cancel_reply_result(const Reply& reply) {
  expect_ok(reply, "FCALL expiry_cancel");
  if (reply.type != Reply::Type::Integer) throw ReplyError("FCALL expiry_cancel: unexpected reply " + reply.describe());
  return reply.integer == 1;
}

}  // namespace expiry
