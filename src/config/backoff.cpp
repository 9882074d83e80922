// Exponential backoff with "equal"-style jitter; see backoff.h for the contract.
#include "config/backoff.h"

#include <algorithm>
#include <cmath>

namespace expiry {

std::chrono::milliseconds backoff_delay(const BackoffPolicy& policy, uint32_t attempt, double unit_random) {
  const double cap = static_cast<double>(std::max<int64_t>(1, policy.max.count()));
  const double base = static_cast<double>(std::max<int64_t>(1, policy.initial.count()));
  const double grown = attempt >= 62 ? cap : std::min(cap, base * std::ldexp(1.0, static_cast<int>(attempt)));
  const double jitter = std::clamp(policy.jitter, 0.0, 1.0);
  const double r = std::clamp(unit_random, 0.0, 1.0);
  const double delay = grown * (1.0 - jitter) + grown * jitter * r;
  return std::chrono::milliseconds(std::max<int64_t>(1, static_cast<int64_t>(delay)));
}

}  // namespace expiry
