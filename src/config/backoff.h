// Reconnect backoff: exponential growth with jitter, capped (pure, no clock or sockets).
#pragma once

#include <chrono>
#include <cstdint>

namespace expiry {

struct BackoffPolicy {
  std::chrono::milliseconds initial{100};  // delay before the first retry, before jitter
  std::chrono::milliseconds max{5000};     // cap on any delay
  double jitter = 0.5;                     // fraction of the delay that is randomised, in [0, 1]
};

// Delay before retry number `attempt` (0 = first retry after a failure).
// `unit_random` is a uniform draw in [0, 1). The result is in
// [(1 - jitter) * d, d] where d = min(max, initial * 2^attempt), and never below 1 ms.
std::chrono::milliseconds backoff_delay(const BackoffPolicy& policy, uint32_t attempt, double unit_random);

// Delay before a task whose handler failed delivery number `failed_attempt` (1 = the first) is
// delivered again: min(max, initial * 2^(failed_attempt - 1)), no jitter (the consumer's retry
// policy: retry_base_ms, retry_max_ms), never below 1 ms. policy.jitter is ignored.
std::chrono::milliseconds retry_delay(const BackoffPolicy& policy, uint64_t failed_attempt);

}  // namespace expiry
