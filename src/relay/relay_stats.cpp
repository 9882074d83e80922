// One-line summary of RelayStats for logs.
#include "relay/relay_stats.h"

#include "io/metrics.h"

#include <sstream>

namespace expiry {

void RelayStats::observe_lateness_ms(long long ms) {
  if (ms < 0) {
    ++forwarded_already_due;
    return;
  }
  if (lateness != nullptr) observe(*lateness, static_cast<double>(ms) / 1000.0);
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
      << " sweep_batches=" << sweep_batches << " sweep_errors=" << sweep_errors
      << " sweep_time_ms=" << sweep_time_us / 1000 << " wakeups=" << wakeups;
  return out.str();
}

}  // namespace expiry
