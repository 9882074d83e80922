// One task to schedule, from the command line or a bulk-file line, and its local validation.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/function_library.h"
#include "protocol/key_layout.h"
#include "protocol/task_options.h"

namespace expiry {

// The Lua library's largest accepted millisecond value (9999-12-31T23:59:59.999Z).
constexpr long long kMaxTimeMs = 253402300799999;

struct ScheduleRequest {
  std::string id;
  ScheduleMode mode = ScheduleMode::Delay;
  long long ms = 0;     // Delay: milliseconds from now (>= 0); At: due time in epoch ms (> 0)
  std::string payload;  // opaque bytes
  std::string stream;   // empty: the relay's default stream
  TaskOptions options;  // if_absent, debounce, lateness limit, traceparent (protocol/task_options.h)
};

// An error message if the request breaks a rule that Redis would enforce or that this CLI adds
// (id per task_id_error, payload <= kMaxPayloadBytes, delay in 0..kMaxTimeMs, due time in
// 1..kMaxTimeMs, options per task_options_error); nullopt if it is valid. Checked before anything is sent.
std::optional<std::string> schedule_request_error(const ScheduleRequest& request);

// FCALL expiry_schedule for `request` in the namespace of `keys`, from a client of database `db`;
// the form with options when it has any.
std::vector<std::string> schedule_request_argv(const KeyLayout& keys, const ScheduleRequest& request, int db);

}  // namespace expiry
