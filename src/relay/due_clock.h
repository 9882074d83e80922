// Overflow-safe arithmetic between Redis-clock times (due times in ms, the clock in µs) and
// the relay's timer delays. Pure. Every input may come from Redis data that the library did
// not write (a hand-made member scored 1e16 or +inf, a forged wake message), so nothing here
// may overflow, and every delay it returns lies within [0, cap].
#pragma once

#include <chrono>

#include "base/clock.h"

namespace expiry {

// a + b and a - b, saturated at the limits of long long.
long long saturating_add(long long a, long long b);
long long saturating_sub(long long a, long long b);
// ms * 1000, saturated.
long long ms_to_us(long long ms);

// The delay from `now_us` until the start of millisecond `due_ms` (both on the Redis clock),
// clamped into [0, cap].
std::chrono::microseconds delay_until_due(long long due_ms, long long now_us, std::chrono::microseconds cap);

// The Redis clock (µs) now, estimated from a reading `server_now_us` taken `elapsed` ago.
long long estimated_now_us(long long server_now_us, Clock::duration elapsed);

}  // namespace expiry
