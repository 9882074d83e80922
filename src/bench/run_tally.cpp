// See run_tally.h.
#include "bench/run_tally.h"

#include <algorithm>

#include "bench/bench_context.h"

namespace expiry::bench {

RunTally tally_run(const std::vector<ReceivedEntry>& entries, const std::string& prefix, size_t expected,
                   long long start_ms, double censor_ms) {
  RunTally t;
  t.expected = expected;
  std::vector<unsigned> seen(expected, 0);
  std::vector<double> fired, arrival;
  fired.reserve(entries.size());
  arrival.reserve(entries.size());
  for (const auto& received : entries) {
    if (!received.task) {  // not a forwarded task's entry
      ++t.foreign;
      continue;
    }
    const ForwardedTask& e = *received.task;
    ++t.via[e.via];
    const long long index = task_index(prefix, e.id);
    if (index < 0 || static_cast<size_t>(index) >= expected) {
      ++t.foreign;
      continue;
    }
    if (seen[static_cast<size_t>(index)]++ > 0) {
      ++t.duplicated;
      continue;
    }
    if (e.via == kDrainVia) {
      ++t.drained;
      continue;
    }
    ++t.forwarded;
    const long long origin = std::max(e.due_ms, start_ms);
    fired.push_back(static_cast<double>(e.fired_ms - origin));
    arrival.push_back(static_cast<double>(received.arrival_us) / 1000.0 - static_cast<double>(origin));
    if (t.first_fired_ms == 0 || e.fired_ms < t.first_fired_ms) t.first_fired_ms = e.fired_ms;
    t.last_fired_ms = std::max(t.last_fired_ms, e.fired_ms);
  }
  for (unsigned n : seen) t.lost += n == 0 ? 1 : 0;
  t.fired_ms_values = fired;
  t.fired = summarize_lateness(std::move(fired), t.drained, censor_ms);
  t.arrival = summarize_lateness(std::move(arrival), t.drained, censor_ms);
  return t;
}

}  // namespace expiry::bench
