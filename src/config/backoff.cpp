// Exponential backoff, with "equal"-style jitter for reconnects, exact for retries; see backoff.h.
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

std::chrono::milliseconds retry_delay(const BackoffPolicy& policy, uint64_t failed_attempt) {
  BackoffPolicy exact = policy;
  exact.jitter = 0.0;
  const uint64_t step = failed_attempt == 0 ? 0 : failed_attempt - 1;
  return backoff_delay(exact, static_cast<uint32_t>(std::min<uint64_t>(step, 62)), 0.0);
}

}  // namespace expiry
