// Local validation of tasks; see task.h.
#include "producer/task.h"

#include "functions/key_layout.h"

namespace expiry {

std::optional<std::string> task_error(const Task& task) {
  if (auto err = task_id_error(task.id)) return err;
  if (task.payload.size() > kMaxPayloadBytes) {
    return "payload is " + std::to_string(task.payload.size()) + " bytes, larger than the limit of " +
           std::to_string(kMaxPayloadBytes);
  }
  if (task.mode == ScheduleMode::Delay) {
    if (task.ms < 0 || task.ms > kMaxTimeMs) {
      return "delay_ms must be between 0 and " + std::to_string(kMaxTimeMs) + ", got " + std::to_string(task.ms);
    }
  } else if (task.ms < 1 || task.ms > kMaxTimeMs) {
    return "at_ms must be between 1 and " + std::to_string(kMaxTimeMs) + ", got " + std::to_string(task.ms);
  }
  if (auto err = task_options_error(task.options)) return err;
  return std::nullopt;
}

}  // namespace expiry
