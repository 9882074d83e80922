// One task to schedule (docs/protocol.md, expiry_schedule) and its local validation: the rules
// the Lua library enforces, checked before anything is sent. Part of the installed API
// (include/expiry/producer/): it includes only standard headers and the installed base/ and
// functions/ headers, by paths relative to this file.
#pragma once

#include <optional>
#include <string>

#include "../functions/task_options.h"
#include "../functions/task_values.h"

namespace expiry {

// The Lua library's largest accepted millisecond value (9999-12-31T23:59:59.999Z).
constexpr long long kMaxTimeMs = 253402300799999;

struct Task {
  std::string id;
  ScheduleMode mode = ScheduleMode::Delay;
  long long ms = 0;     // Delay: milliseconds from now (>= 0); At: due time in epoch ms (> 0)
  std::string payload;  // opaque bytes
  std::string stream;   // empty: the relay's default stream
  TaskOptions options;  // if_absent, debounce, lateness limit, traceparent, webhook (functions/task_options.h)
};

// An error message if `task` breaks a rule that Redis would enforce (id per task_id_error,
// payload <= 65536 bytes, delay in 0..kMaxTimeMs, due time in 1..kMaxTimeMs, options per
// task_options_error); nullopt if it is valid. The stream's name is checked against the
// namespace by the Producer (stream_name_error in functions/key_layout.h).
std::optional<std::string> task_error(const Task& task);

}  // namespace expiry
