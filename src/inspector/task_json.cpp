// See task_json.h.
#include "inspector/task_json.h"

#include <string_view>

#include "base/base64.h"
#include "base/text_escape.h"
#include "redis/redis_values.h"

namespace expiry {

nlohmann::json task_details_json(const std::string& id, const TaskDetails& task, BinaryPayload binary) {
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
    if (binary == BinaryPayload::AsText || first_invalid_utf8(*payload) == std::string::npos) {
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
    out[name] = number && !is_text_shadow_field(name) ? nlohmann::json(*number) : nlohmann::json(*value);
  }
  return out;
}

}  // namespace expiry
