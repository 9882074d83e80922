// The due-time bars of the timeline (Inspector::timeline, GET /v1/timeline) and the nearest-rank
// percentile of the overview's lateness. Pure.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace expiry {

// One histogram of the timeline: `steps` bars of `step_ms` each, from now on.
struct TimelineRange {
  const char* name;  // "minute", "hour", "day"
  long long step_ms;
  int steps;
};
inline constexpr TimelineRange kTimelineRanges[] = {
    {"minute", 5'000, 12},      // 5 s bars over the next minute
    {"hour", 300'000, 12},      // 5 min bars over the next hour
    {"day", 3'600'000, 24},     // 1 h bars over the next day
};

// The ZCOUNT bounds of each bar of `range` from `now_ms`: bar i holds the tasks due in
// (now + i*step, now + (i+1)*step], as Redis score ranges ("(lo", "hi").
std::vector<std::pair<std::string, std::string>> timeline_bounds(long long now_ms, const TimelineRange& range);

// The nearest-rank percentile `p` (0 < p <= 100) of `values` (sorted here); nullopt when empty.
std::optional<long long> percentile(std::vector<long long> values, double p);

}  // namespace expiry
