// See sweep_timing.h.
#include "relay/sweep_timing.h"

#include "relay/due_clock.h"

namespace expiry {

std::chrono::microseconds next_sweep_delay(long long next_due_ms, long long now_us, bool next_due_timer,
                                           std::chrono::microseconds interval) {
  if (next_due_ms < 0 || !next_due_timer) return interval;
  return delay_until_due(next_due_ms, now_us, interval);
}

std::chrono::microseconds due_notice_delay(long long due_ms, long long server_now_us, Clock::duration since_reading,
                                           std::chrono::microseconds interval) {
  return delay_until_due(due_ms, estimated_now_us(server_now_us, since_reading), interval);
}

bool needs_earlier_arm(bool armed, std::chrono::microseconds remaining, std::chrono::microseconds delay) {
  return !armed || remaining > delay;
}

}  // namespace expiry
