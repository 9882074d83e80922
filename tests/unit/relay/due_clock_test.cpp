// due_clock: timer delays from Redis data that may hold any number (issue: a member scored
// 1e16 or +inf once made the relay busy-loop through an overflow).
#include "relay/due_clock.h"

#include <gtest/gtest.h>

#include <limits>

namespace expiry {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
constexpr long long kMax = std::numeric_limits<long long>::max();
constexpr long long kMin = std::numeric_limits<long long>::min();
const microseconds kCap = milliseconds(1000);

TEST(DueClock, SaturatingArithmeticNeverWraps) {
  EXPECT_EQ(saturating_add(kMax, 1), kMax);
  EXPECT_EQ(saturating_add(kMin, -1), kMin);
  EXPECT_EQ(saturating_sub(kMin, 1), kMin);
  EXPECT_EQ(saturating_sub(kMax, -1), kMax);
  EXPECT_EQ(saturating_sub(0, kMin), kMax);
  EXPECT_EQ(saturating_add(2, 3), 5);
  EXPECT_EQ(saturating_sub(2, 3), -1);
  EXPECT_EQ(ms_to_us(10'000'000'000'000'000LL), kMax);  // 1e16 ms
  EXPECT_EQ(ms_to_us(kMin), kMin);
  EXPECT_EQ(ms_to_us(-5), -5000);
}

TEST(DueClock, DelayIsTheTimeToTheDueMillisecond) {
  const long long now_us = 1'795'000'000'000'250;
  EXPECT_EQ(delay_until_due(1'795'000'000'003, now_us, kCap), microseconds(2750));
  EXPECT_EQ(delay_until_due(1'795'000'000'000, now_us, kCap), microseconds(0)) << "due: no negative delay";
}

TEST(DueClock, HugeOrNegativeDueTimesGiveDelaysWithinTheCap) {
  const long long now_us = 1'795'000'000'000'000;
  // Members the library never writes: 1e16, the largest integer Redis replies with for +inf, and
  // the value -inf once decoded to.
  EXPECT_EQ(delay_until_due(10'000'000'000'000'000LL, now_us, kCap), kCap);
  EXPECT_EQ(delay_until_due(kMax, now_us, kCap), kCap);
  EXPECT_EQ(delay_until_due(kMin, now_us, kCap), microseconds(0));
  EXPECT_EQ(delay_until_due(-1, now_us, kCap), microseconds(0));
  // A clock reading that is itself nonsense still yields a bounded delay.
  EXPECT_EQ(delay_until_due(5, kMin, kCap), kCap);
  EXPECT_EQ(delay_until_due(5, kMax, kCap), microseconds(0));
  EXPECT_EQ(delay_until_due(kMax, now_us, microseconds(-1)), microseconds(0)) << "a negative cap acts as 0";
}

TEST(DueClock, EstimatedNowAddsTheElapsedTimeAndSaturates) {
  EXPECT_EQ(estimated_now_us(1000, milliseconds(2)), 3000);
  EXPECT_EQ(estimated_now_us(kMax - 1, milliseconds(1)), kMax);
}

}  // namespace
}  // namespace expiry
