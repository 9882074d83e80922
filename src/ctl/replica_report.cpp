// See replica_report.h.
#include "ctl/replica_report.h"

namespace expiry {

std::string replica_shortfall_message(long long wanted, long long acknowledged, long long timeout_ms, bool cluster) {
  return "only " + std::to_string(acknowledged) + " of the " + std::to_string(wanted) + " replica" +
         (wanted == 1 ? "" : "s") + " asked for acknowledged the writes within " + std::to_string(timeout_ms) +
         " ms" + (cluster ? " (the fewest on any primary written to)" : "") +
         "; the tasks were written to the primary, but a crash of it before they reach a replica would lose them "
         "(docs/reliability.md)";
}

}  // namespace expiry
