// sweep_timing: the sweeper's next delay, the delay for a due notice on the estimated Redis
// clock, and the keep-the-sooner-deadline rule, all with fake clock readings.
#include "relay/sweep_timing.h"

#include <gtest/gtest.h>

#include <limits>

namespace expiry {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
constexpr long long kMax = std::numeric_limits<long long>::max();
constexpr long long kMin = std::numeric_limits<long long>::min();
const microseconds kInterval = milliseconds(1000);

TEST(NextSweepDelay, NothingPendingWaitsOneInterval) {
  EXPECT_EQ(next_sweep_delay(-1, 5'000'000, true, kInterval), kInterval);
  EXPECT_EQ(next_sweep_delay(kMin, 5'000'000, true, kInterval), kInterval);
}

TEST(NextSweepDelay, WithoutTheNextDueTimerItIsPeriodic) {
  EXPECT_EQ(next_sweep_delay(5'001, 5'000'000, false, kInterval), kInterval);
}

TEST(NextSweepDelay, WaitsUntilTheStartOfTheDueMillisecond) {
  // now 5.000250 s on the Redis clock, due at 5.010 s: 9750 µs.
  EXPECT_EQ(next_sweep_delay(5'010, 5'000'250, true, kInterval), microseconds(9'750));
}

TEST(NextSweepDelay, AlreadyDueIsImmediate) {
  EXPECT_EQ(next_sweep_delay(4'000, 5'000'000, true, kInterval), microseconds(0));
  EXPECT_EQ(next_sweep_delay(0, kMax, true, kInterval), microseconds(0));
}

TEST(NextSweepDelay, FarFutureIsCappedByTheInterval) {
  EXPECT_EQ(next_sweep_delay(9'000, 5'000'000, true, kInterval), kInterval);
  EXPECT_EQ(next_sweep_delay(kMax, 5'000'000, true, kInterval), kInterval);  // a forged 1e16+ score
  EXPECT_EQ(next_sweep_delay(kMax, kMin, true, kInterval), kInterval);
}

TEST(NextSweepDelay, ANegativeIntervalNeverGivesANegativeDelay) {
  EXPECT_EQ(next_sweep_delay(9'000, 5'000'000, true, microseconds(-5)), microseconds(0));
}

TEST(DueNoticeDelay, EstimatesTheRedisClockFromTheLastReading) {
  // Read 5.000000 s, 300 ms ago: Redis is at 5.3 s, the task is due at 5.5 s.
  EXPECT_EQ(due_notice_delay(5'500, 5'000'000, milliseconds(300), kInterval), milliseconds(200));
  // Due before the estimated now: immediate.
  EXPECT_EQ(due_notice_delay(5'200, 5'000'000, milliseconds(300), kInterval), microseconds(0));
  // No time has passed since the reading.
  EXPECT_EQ(due_notice_delay(5'001, 5'000'000, Clock::duration::zero(), kInterval), milliseconds(1));
}

TEST(DueNoticeDelay, IsCappedAndNeverOverflows) {
  EXPECT_EQ(due_notice_delay(1'000'000, 5'000'000, milliseconds(1), kInterval), kInterval);
  EXPECT_EQ(due_notice_delay(kMax, kMax, std::chrono::hours(1), kInterval), microseconds(0));  // both saturate
  EXPECT_EQ(due_notice_delay(kMin, kMax, std::chrono::hours(1), kInterval), microseconds(0));
  EXPECT_EQ(due_notice_delay(kMax, kMin, Clock::duration::zero(), kInterval), kInterval);
}

TEST(NeedsEarlierArm, AnUnarmedTimerIsArmed) {
  EXPECT_TRUE(needs_earlier_arm(false, microseconds(0), microseconds(500)));
  EXPECT_TRUE(needs_earlier_arm(false, microseconds(100), microseconds(500)));
}

TEST(NeedsEarlierArm, AnArmedTimerIsKeptWhenItFiresSoonEnough) {
  EXPECT_FALSE(needs_earlier_arm(true, microseconds(100), microseconds(500)));
  EXPECT_FALSE(needs_earlier_arm(true, microseconds(500), microseconds(500)));
  EXPECT_FALSE(needs_earlier_arm(true, microseconds(0), microseconds(0)));
}

TEST(NeedsEarlierArm, AnArmedTimerThatFiresLaterIsRearmed) {
  EXPECT_TRUE(needs_earlier_arm(true, microseconds(501), microseconds(500)));
  EXPECT_TRUE(needs_earlier_arm(true, kInterval, microseconds(0)));
}

TEST(SweepTiming, CoalescingAddsTheWindowWithinTheCap) {
  EXPECT_EQ(coalesced_delay(microseconds(750), milliseconds(2), kInterval), microseconds(2'750));
  EXPECT_EQ(coalesced_delay(microseconds(0), milliseconds(0), kInterval), microseconds(0));
  EXPECT_EQ(coalesced_delay(kInterval, milliseconds(2), kInterval), kInterval);
  EXPECT_EQ(coalesced_delay(microseconds(-5), milliseconds(2), kInterval), milliseconds(2));
  EXPECT_EQ(coalesced_delay(microseconds(std::numeric_limits<long long>::max()), milliseconds(2), kInterval), kInterval);
}

}  // namespace
}  // namespace expiry
