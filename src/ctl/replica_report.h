// What expiry-ctl schedule says when the replicas did not acknowledge its writes in time. Pure.
#pragma once

#include <string>

namespace expiry {

// The message of schedule --wait-replicas when fewer replicas than `wanted` acknowledged the
// writes within `timeout_ms`.
std::string replica_shortfall_message(long long wanted, long long acknowledged, long long timeout_ms, bool cluster);

}  // namespace expiry
