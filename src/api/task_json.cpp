// See task_json.h.
#include "api/task_json.h"

#include "inspector/task_json.h"

namespace expiry {

nlohmann::json task_details_json(const std::string& id, const TaskDetails& task) {
  return task_details_json(id, task, BinaryPayload::AsBase64);
}

nlohmann::json listed_task_json(const ListedTask& task, const ListedTaskDetails& details) {
  return {{"id", task.id},
          {"due_ms", task.due_ms ? nlohmann::json(*task.due_ms) : nlohmann::json()},
          {"bucket", task.bucket},
          {"stream", details.stream},
          {"default_stream", details.default_stream},
          {"payload_bytes", details.payload_bytes}};
}

nlohmann::json schedule_result_json(const std::string& id, const ScheduleResult& result) {
  return {{"id", id}, {"due_ms", result.due_ms}, {"replaced", result.replaced}, {"kept", result.kept}};
}

nlohmann::json run_now_result_json(const std::string& id, const RunNowResult& result) {
  return {{"id", id},
          {"previous_due_ms", result.previous_due_ms},
          {"due_ms", result.due_ms},
          {"was_due", result.due_ms == result.previous_due_ms}};
}

std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace expiry
