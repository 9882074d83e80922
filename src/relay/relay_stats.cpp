// One-line summary of RelayStats for logs.
#include "relay/relay_stats.h"

#include "service/metrics.h"

#include <algorithm>
#include <sstream>

namespace expiry {

void RelayStats::observe_lateness_ms(long long ms) {
  if (ms < 0) {
    ++forwarded_already_due;
    return;
  }
  if (lateness != nullptr) observe(*lateness, static_cast<double>(ms) / 1000.0);
}

int64_t RelayStats::pending() const {
  int64_t sum = 0;
  for (const auto& [bucket, g] : schedules) sum += g.pending;
  return sum;
}

int64_t RelayStats::overdue() const {
  int64_t sum = 0;
  for (const auto& [bucket, g] : schedules) sum += g.overdue;
  return sum;
}

int64_t RelayStats::oldest_overdue_ms() const {
  int64_t oldest = 0;
  for (const auto& [bucket, g] : schedules) oldest = std::max(oldest, g.oldest_overdue_ms);
  return oldest;
}

bool RelayStats::keyspace_notifications_on() const {
  if (keyspace_notifications.empty()) return false;
  return std::all_of(keyspace_notifications.begin(), keyspace_notifications.end(),
                     [](const auto& node) { return node.second; });
}

int64_t RelayStats::paused_buckets() const {
  int64_t n = 0;
  for (const auto& [bucket, g] : schedules) n += g.paused_until_ms >= 0 ? 1 : 0;
  return n;
}

std::string RelayStats::summary() const {
  std::ostringstream out;
  out << "forwarded_event=" << forwarded_event << " forwarded_sweep=" << forwarded_sweep
      << " forwarded_already_due=" << forwarded_already_due << " events_received=" << events_received
      << " events_ignored=" << events_ignored << " events_invalid_id=" << events_invalid_id
      << " events_other_db=" << events_other_db
      << " claims_lost=" << claims_lost << " claims_not_due=" << claims_not_due
      << " claims_deferred=" << claims_deferred
      << " events_to_draining_sweep=" << events_to_draining_sweep << " claim_errors=" << claim_errors
      << " claims_paused=" << claims_paused
      << " dead_lettered_late=" << dead_lettered_late_event + dead_lettered_late_sweep
      << " sweep_batches=" << sweep_batches << " sweep_errors=" << sweep_errors
      << " sweep_time_ms=" << sweep_time_us / 1000 << " wakeups=" << wakeups;
  return out.str();
}

}  // namespace expiry
