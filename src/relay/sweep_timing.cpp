// See sweep_timing.h.
#include "relay/sweep_timing.h"

#include <algorithm>

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

std::chrono::microseconds coalesced_delay(std::chrono::microseconds delay, std::chrono::microseconds window,
                                          std::chrono::microseconds cap) {
  const long long total = saturating_add(std::max<long long>(0, delay.count()), std::max<long long>(0, window.count()));
  return std::chrono::microseconds(std::clamp<long long>(total, 0, std::max<long long>(0, cap.count())));
}

bool needs_earlier_arm(bool armed, std::chrono::microseconds remaining, std::chrono::microseconds delay) {
  return !armed || remaining > delay;
}

}  // namespace expiry
