// The monotonic clock of every timer, deadline and rate limit in the project, and this host's
// wall clock in epoch ms (where no Redis clock is at hand: a rule's anchor, an offline preview).
#pragma once

#include <chrono>

namespace expiry {

using Clock = std::chrono::steady_clock;

inline long long wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace expiry
