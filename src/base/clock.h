// The monotonic clock of every timer, deadline and rate limit in the project.
#pragma once

#include <chrono>

namespace expiry {

using Clock = std::chrono::steady_clock;

}  // namespace expiry
