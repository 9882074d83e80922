// See due_clock.h.
#include "relay/due_clock.h"

#include <algorithm>
#include <limits>

namespace expiry {

namespace {
constexpr long long kMax = std::numeric_limits<long long>::max();
constexpr long long kMin = std::numeric_limits<long long>::min();
}  // namespace

long long saturating_add(long long a, long long b) {
  long long out = 0;
  if (__builtin_add_overflow(a, b, &out)) return b > 0 ? kMax : kMin;
  return out;
}

long long saturating_sub(long long a, long long b) {
  long long out = 0;
  if (__builtin_sub_overflow(a, b, &out)) return b < 0 ? kMax : kMin;
  return out;
}

long long ms_to_us(long long ms) {
  long long out = 0;
  if (__builtin_mul_overflow(ms, 1000LL, &out)) return ms > 0 ? kMax : kMin;
  return out;
}

std::chrono::microseconds delay_until_due(long long due_ms, long long now_us, std::chrono::microseconds cap) {
  const long long delay = saturating_sub(ms_to_us(due_ms), now_us);
  return std::chrono::microseconds(std::clamp<long long>(delay, 0, std::max<long long>(0, cap.count())));
}

long long estimated_now_us(long long server_now_us, Clock::duration elapsed) {
  return saturating_add(server_now_us, std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
}

}  // namespace expiry
