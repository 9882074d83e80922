// The recurring schedules in brief (Inspector::recurring_summaries, GET /v1/recurring): each
// with its rule, state and armed occurrence, as stored; no occurrence is computed here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace expiry {

struct RecurringSummary {
  std::string id;
  std::optional<std::string> rule;  // each text field: nullopt when absent or empty
  std::optional<std::string> tz;
  std::optional<std::string> misfire;
  bool paused = false;
  bool ended = false;
  std::optional<long long> next_ms;  // the armed occurrence (armed_ms)
  std::optional<std::string> next_local;
  std::optional<long long> last_ms;
  std::optional<long long> fired;
  std::optional<long long> skipped;
};

struct RecurringSummaries {
  std::vector<RecurringSummary> schedules;  // bucket by bucket, in each index's order
  bool more = false;                        // the limit was reached before the last bucket's end
};

}  // namespace expiry
