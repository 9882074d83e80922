// Local validation of schedule requests; see schedule_request.h.
#include "ctl/schedule_request.h"

namespace expiry {

std::optional<std::string> schedule_request_error(const ScheduleRequest& request) {
  if (auto err = task_id_error(request.id)) return err;
  if (request.payload.size() > kMaxPayloadBytes) {
    return "payload is " + std::to_string(request.payload.size()) + " bytes, larger than the limit of " +
           std::to_string(kMaxPayloadBytes);
  }
  if (request.mode == ScheduleMode::Delay) {
    if (request.ms < 0 || request.ms > kMaxTimeMs) {
      return "delay_ms must be between 0 and " + std::to_string(kMaxTimeMs) + ", got " + std::to_string(request.ms);
    }
  } else if (request.ms < 1 || request.ms > kMaxTimeMs) {
    return "at_ms must be between 1 and " + std::to_string(kMaxTimeMs) + ", got " + std::to_string(request.ms);
  }
  if (auto err = task_options_error(request.options)) return err;
  return std::nullopt;
}

std::vector<std::string> schedule_request_argv(const KeyLayout& keys, const ScheduleRequest& request, int db) {
  return schedule_argv(keys, request.id, request.mode, request.ms, request.payload, request.stream, db,
                       task_options_argument(request.options));
}

}  // namespace expiry
