// The values a producer exchanges with the library's task functions (src/lua/expiry/, the v2 names,
// docs/protocol.md): the schedule mode, the filter of the bounded range walks, and the decoded
// replies of schedule, reschedule, run-now and pause/resume. Plain data, standard headers only:
// the installed producer API (include/expiry/producer/) returns them as they are.
#pragma once

#include <optional>
#include <string>

namespace expiry {

enum class ScheduleMode { Delay, At };

// The tasks a range walk acts on (walk_range in src/lua/expiry/ranges.lua). Bounds are exclusive; nullopt:
// unbounded.
struct RangeFilter {
  std::string prefix;                  // ids starting with it; empty: any
  std::optional<long long> after_ms;   // due > after_ms
  std::optional<long long> before_ms;  // due < before_ms
};

struct ScheduleResult {
  long long due_ms = 0;
  bool replaced = false;
  bool kept = false;  // if_absent found the task pending and left it (due_ms is its due time)
};
struct RescheduleResult {
  long long due_ms = 0;
  long long now_ms = 0;
};
struct RunNowResult {
  bool pending = false;
  long long previous_due_ms = 0;
  long long due_ms = 0;  // equal to previous_due_ms when it was due already
};
// expiry_v2_pause and expiry_v2_resume: {until_ms or was_paused, pending, overdue}.
struct PauseResult {
  long long value = 0;
  long long pending = 0;
  long long overdue = 0;
};

}  // namespace expiry
