// When the sweeper runs next: the timer delay after a sweep reply, the delay for a task that
// was announced as due, and whether a timer already armed is soon enough. Pure (the clock
// readings are arguments), built on due_clock.h, so every delay lies within [0, cap].
#pragma once

#include <chrono>

#include "base/clock.h"

namespace expiry {

// The delay after a sweep reply that read the Redis clock `now_us` and found the earliest
// pending task due at `next_due_ms` (negative: none pending). Without the next-due timer, or
// with nothing pending, it is the sweep period `interval`; otherwise the time until that task
// is due (at the start of its millisecond), capped by `interval`.
std::chrono::microseconds next_sweep_delay(long long next_due_ms, long long now_us, bool next_due_timer,
                                           std::chrono::microseconds interval);

// The delay until a task announced as due at `due_ms` (Redis clock), with the Redis clock
// estimated from the reading `server_now_us` taken `since_reading` ago; capped by `interval`.
std::chrono::microseconds due_notice_delay(long long due_ms, long long server_now_us, Clock::duration since_reading,
                                           std::chrono::microseconds interval);

// `delay`, the wait for a due task, extended by the coalescing window `window`, so one sweep call
// also claims the tasks that come due within the window after it (fewer calls, each at most
// `window` later), capped by `cap`.
std::chrono::microseconds coalesced_delay(std::chrono::microseconds delay, std::chrono::microseconds window,
                                          std::chrono::microseconds cap);

// Whether a timer must be (re)armed so that it fires within `delay`: it is not armed, or it
// would fire later than that.
bool needs_earlier_arm(bool armed, std::chrono::microseconds remaining, std::chrono::microseconds delay);

}  // namespace expiry
