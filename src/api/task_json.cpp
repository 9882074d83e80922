// See task_json.h.
#include "api/task_json.h"

#include <string_view>

#include "base/base64.h"
#include "base/text_escape.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

// As expiry-ctl show: the shadow fields only some tasks have.
constexpr const char* kOptionalShadowFields[] = {"first_ms",    "max_late_ms",      "traceparent",
                                                 "promoted_ms", "promoted_from_ms", "attempt"};

}  // namespace

nlohmann::json task_details_json(const std::string& id, const TaskDetails& task) {
  if (!task.pending) return {{"id", id}, {"pending", false}};
  nlohmann::json out = {{"id", id},
                        {"pending", true},
                        {"due_ms", task.due_ms},
                        {"due_in_ms", task.due_ms - task.now_ms},
                        {"created_ms", nullptr},
                        {"payload", nullptr},
                        {"stream", task.stream},
                        {"default_stream", task.default_stream},
                        {"trigger_pttl_ms", nullptr}};
  if (const auto created = task.field("created_ms")) {
    if (auto c = to_integer(*created)) out["created_ms"] = *c;
  }
  if (const auto payload = task.field("payload")) {
    if (first_invalid_utf8(*payload) == std::string::npos) {
      out["payload"] = *payload;
    } else {
      out["payload_b64"] = base64_encode(*payload);
    }
  }
  if (task.trigger_pttl_ms != -2) out["trigger_pttl_ms"] = task.trigger_pttl_ms;
  for (const char* name : kOptionalShadowFields) {
    const auto value = task.field(name);
    if (!value) continue;
    const auto number = to_integer(*value);
    out[name] = number && std::string_view(name) != "traceparent" ? nlohmann::json(*number) : nlohmann::json(*value);
  }
  return out;
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
