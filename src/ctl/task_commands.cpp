// The single-task subcommands: schedule, cancel, show, load-functions.
#include <fstream>
#include <iostream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "inspector/inspector.h"
#include "inspector/task_json.h"
#include "io/sync/routed_client.h"
#include "producer/producer.h"
#include "producer/task.h"
#include "producer/task_placement.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

std::string read_payload_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot read payload file " + path);
  std::string data;
  char buf[8192];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    data.append(buf, static_cast<size_t>(in.gcount()));
    if (data.size() > kMaxPayloadBytes) {
      throw ConfigError("payload file " + path + " is larger than the limit of " + std::to_string(kMaxPayloadBytes) +
                        " bytes");
    }
  }
  if (in.bad()) throw ConfigError("cannot read payload file " + path);
  return data;
}

Task request_from(const ScheduleOptions& o) {
  Task r;
  r.id = o.id;
  if (o.delay_ms && o.at_ms) throw ConfigError("--delay-ms and --at-ms are mutually exclusive");
  if (!o.delay_ms && !o.at_ms) throw ConfigError("one of --delay-ms or --at-ms is required");
  r.mode = o.delay_ms ? ScheduleMode::Delay : ScheduleMode::At;
  r.ms = o.delay_ms ? *o.delay_ms : *o.at_ms;
  if (o.payload && !o.payload_file.empty()) throw ConfigError("--payload and --payload-file are mutually exclusive");
  if (o.payload) r.payload = *o.payload;
  if (!o.payload_file.empty()) r.payload = read_payload_file(o.payload_file);
  if (o.stream) {
    if (o.stream->empty()) throw ConfigError("--stream must not be empty (omit it for the default stream)");
    r.stream = *o.stream;
  }
  r.options = o.task;
  if (auto err = task_error(r)) {
    throw ConfigError(*err + (r.id.empty() ? "" : " (task id '" + escape_text(r.id) + "')"));
  }
  return r;
}

void check_id(const std::string& id) {
  if (auto err = task_id_error(id)) throw ConfigError(*err);
}

// A JSON string for arbitrary bytes: invalid UTF-8 is replaced by U+FFFD.
std::string json_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void warn_past(long long due_ms, long long now_ms) {
  std::cerr << "expiry-ctl: warning: --at-ms " << due_ms << " lies " << (now_ms - due_ms)
            << " ms in the past (Redis clock): the task is due at once\n";
}

// Warns when `due_ms` is not in the future on the Redis clock (the library's own clock) of the
// node holding task `id`.
void warn_if_past(Producer& producer, const std::string& id, long long due_ms) {
  // A warning only: a user without TIME still scheduled the task.
  const auto now_ms = Inspector(producer).clock_of_task(id);
  if (now_ms && due_ms <= *now_ms) warn_past(due_ms, *now_ms);
}

}  // namespace

int run_schedule(const CtlTarget& target, const ScheduleOptions& options) {
  const Task request = request_from(options);
  if (!request.stream.empty()) {
    if (auto err = stream_name_error(request.stream, target.ns)) throw ConfigError(*err);
  }
  if (options.wait.replicas < 0) throw ConfigError("--wait-replicas must not be negative");
  CtlSession session(target, options.wait);
  const auto result = session.producer.schedule(request);
  const auto write_again = [&] {
    const auto again = session.producer.schedule(request);
    std::cout << "scheduled " << escape_text(request.id) << " again due_ms=" << again.due_ms << "\n";
  };
  if (result.kept) {
    // --if-absent found the task pending: exit 0, since the task the caller wanted exists.
    std::cout << "kept " << escape_text(request.id) << " due_ms=" << result.due_ms
              << " (already pending; nothing was changed)\n";
    return confirm_writes(session, options.wait, write_again);
  }
  std::cout << "scheduled " << escape_text(request.id) << " due_ms=" << result.due_ms
            << (result.replaced ? " (replaced an existing task)" : "") << "\n";
  if (result.replaced && request.payload.empty()) {
    std::cerr << "expiry-ctl: warning: replaced the pending task " << escape_text(request.id)
              << " whole, and its payload is now empty; to move a task and keep its payload, use "
              << "'expiry-ctl reschedule'\n";
  }
  if (options.at_ms) warn_if_past(session.producer, request.id, result.due_ms);
  return confirm_writes(session, options.wait, write_again);
}

int run_reschedule(const CtlTarget& target, const RescheduleOptions& options) {
  check_id(options.id);
  if (options.delay_ms.has_value() == options.at_ms.has_value()) {
    throw ConfigError("reschedule needs exactly one of --delay-ms or --at-ms");
  }
  const ScheduleMode mode = options.delay_ms ? ScheduleMode::Delay : ScheduleMode::At;
  const long long ms = options.delay_ms ? *options.delay_ms : *options.at_ms;
  if (ms < (mode == ScheduleMode::At ? 1 : 0) || ms > kMaxTimeMs) {
    throw ConfigError(std::string(mode == ScheduleMode::At ? "--at-ms" : "--delay-ms") + " must be between " +
                      (mode == ScheduleMode::At ? "1" : "0") + " and " + std::to_string(kMaxTimeMs));
  }
  CtlSession session(target);
  const auto result = session.producer.reschedule(options.id, mode, ms);
  if (!result) {
    std::cerr << "expiry-ctl: task " << escape_text(options.id)
              << " is not pending (already fired, cancelled or never scheduled); nothing was changed\n";
    return kExitNotPending;
  }
  std::cout << "rescheduled " << escape_text(options.id) << " due_ms=" << result->due_ms
            << " (payload and stream kept)\n";
  if (options.at_ms && result->due_ms <= result->now_ms) warn_past(result->due_ms, result->now_ms);
  return kExitOk;
}

int run_cancel(const CtlTarget& target, const std::string& id, bool strict) {
  check_id(id);
  CtlSession session(target);
  if (session.producer.cancel(id)) {
    std::cout << "cancelled " << escape_text(id) << "\n";
    return kExitOk;
  }
  std::cout << "not pending: " << escape_text(id) << "\n";
  return strict ? kExitNotPending : kExitOk;
}

int run_show(const CtlTarget& target, const std::string& id, bool json) {
  check_id(id);
  CtlSession session(target);
  const TaskDetails task = session.producer.show(id);
  if (json) {
    std::cout << json_dump(task_details_json(id, task, BinaryPayload::AsText)) << "\n";
    return task.pending ? kExitOk : kExitNotPending;
  }
  if (!task.pending) {
    std::cout << "not pending: " << escape_text(id) << "\n";
    return kExitNotPending;
  }
  const auto payload = task.field("payload");
  const auto created = task.field("created_ms");
  std::cout << "id: " << escape_text(id) << "\n"
            << "due_ms: " << task.due_ms << "\n"
            << "due_in_ms: " << (task.due_ms - task.now_ms) << "\n"
            << "created_ms: " << (created ? escape_text(*created) : "(missing)") << "\n"
            << "stream: " << escape_text(task.stream) << (task.default_stream ? " (default)" : "") << "\n"
            << "trigger_pttl_ms: "
            << (task.trigger_pttl_ms != -2 ? std::to_string(task.trigger_pttl_ms) : "(trigger key missing)") << "\n"
            << "payload: " << (payload ? escape_text(*payload) : "(missing)") << "\n";
  for (const char* name : kOptionalShadowFields) {
    if (const auto value = task.field(name)) std::cout << name << ": " << escape_text(*value) << "\n";
  }
  return kExitOk;
}

int run_load_functions(const CtlTarget& target) {
  RoutedClient redis(target.redis);
  if (!redis.cluster()) {
    std::cout << redis.single().load_library() << "\n";
    return kExitOk;
  }
  redis.load_library_everywhere(SyncConnection::expiry_library());
  std::cerr << "expiry-ctl: loaded on every primary (" << redis.primaries().size() << ")\n";
  std::cout << kLibraryName << "\n";
  return kExitOk;
}

}  // namespace expiry
