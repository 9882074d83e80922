// Unit tests of backoff_delay (src/config/backoff.h).
#include "config/backoff.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace expiry {
namespace {

using std::chrono::milliseconds;

// Largest double below 1.0: the upper end of a [0, 1) uniform draw.
const double kAlmostOne = std::nextafter(1.0, 0.0);

BackoffPolicy policy(int64_t initial, int64_t max, double jitter) {
  BackoffPolicy p;
  p.initial = milliseconds(initial);
  p.max = milliseconds(max);
  p.jitter = jitter;
  return p;
}

TEST(Backoff, DefaultPolicy) {
  BackoffPolicy p;
  EXPECT_EQ(p.initial, milliseconds(100));
  EXPECT_EQ(p.max, milliseconds(5000));
  EXPECT_DOUBLE_EQ(p.jitter, 0.5);
}

TEST(Backoff, WithoutJitterDoublesFromInitial) {
  const auto p = policy(100, 1000000, 0.0);
  int64_t expected = 100;
  for (uint32_t attempt = 0; attempt < 12; ++attempt) {
    EXPECT_EQ(backoff_delay(p, attempt, 0.0), milliseconds(expected)) << "attempt " << attempt;
    EXPECT_EQ(backoff_delay(p, attempt, 0.7), milliseconds(expected)) << "attempt " << attempt;
    EXPECT_EQ(backoff_delay(p, attempt, kAlmostOne), milliseconds(expected)) << "attempt " << attempt;
    expected *= 2;
  }
}

TEST(Backoff, WithoutJitterExactSequenceUpToTheCap) {
  const auto p = policy(100, 5000, 0.0);
  const int64_t expected[] = {100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000};
  for (uint32_t attempt = 0; attempt < sizeof(expected) / sizeof(expected[0]); ++attempt) {
    EXPECT_EQ(backoff_delay(p, attempt, 0.3), milliseconds(expected[attempt])) << "attempt " << attempt;
  }
}

TEST(Backoff, CappedAtMax) {
  const auto p = policy(100, 5000, 0.5);
  for (uint32_t attempt = 0; attempt < 200; ++attempt) {
    EXPECT_LE(backoff_delay(p, attempt, kAlmostOne), milliseconds(5000)) << "attempt " << attempt;
    EXPECT_LE(backoff_delay(p, attempt, 1.0), milliseconds(5000)) << "attempt " << attempt;
  }
  EXPECT_EQ(backoff_delay(policy(100, 5000, 0.0), 20, 0.0), milliseconds(5000));
}

TEST(Backoff, MaxBelowInitialCapsTheFirstDelay) {
  EXPECT_EQ(backoff_delay(policy(1000, 300, 0.0), 0, 0.0), milliseconds(300));
}

TEST(Backoff, JitterLowerBoundWithZeroDraw) {
  // r = 0 gives the bottom of the range: (1 - jitter) * d.
  EXPECT_EQ(backoff_delay(policy(100, 5000, 0.5), 0, 0.0), milliseconds(50));
  EXPECT_EQ(backoff_delay(policy(100, 5000, 0.5), 3, 0.0), milliseconds(400));
  EXPECT_EQ(backoff_delay(policy(100, 5000, 0.5), 10, 0.0), milliseconds(2500));
  EXPECT_EQ(backoff_delay(policy(100, 5000, 0.25), 2, 0.0), milliseconds(300));
  EXPECT_EQ(backoff_delay(policy(1000, 5000, 1.0), 0, 0.0), milliseconds(1));  // floor of 1 ms
}

TEST(Backoff, JitterUpperBoundWithDrawNearOne) {
  // r -> 1 approaches d from below, never above it.
  const int64_t d[] = {100, 200, 400, 800, 1600, 3200, 5000, 5000};
  for (uint32_t attempt = 0; attempt < 8; ++attempt) {
    const auto got = backoff_delay(policy(100, 5000, 0.5), attempt, kAlmostOne);
    EXPECT_LE(got.count(), d[attempt]) << "attempt " << attempt;
    EXPECT_GE(got.count(), d[attempt] - 1) << "attempt " << attempt;
  }
  EXPECT_EQ(backoff_delay(policy(100, 5000, 0.5), 2, 0.999), milliseconds(399));  // 400 * (0.5 + 0.4995)
}

TEST(Backoff, JitterStaysWithinRangeForAnyDraw) {
  for (double jitter : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    const auto p = policy(100, 5000, jitter);
    for (uint32_t attempt = 0; attempt < 10; ++attempt) {
      const double d = std::min(5000.0, 100.0 * std::ldexp(1.0, static_cast<int>(attempt)));
      for (int i = 0; i <= 100; ++i) {
        const double r = i == 100 ? kAlmostOne : i / 100.0;
        const auto got = backoff_delay(p, attempt, r).count();
        EXPECT_LE(got, static_cast<int64_t>(d)) << "jitter " << jitter << " attempt " << attempt << " r " << r;
        // Truncation to whole milliseconds may lose a fraction of one.
        EXPECT_GE(got, std::max<int64_t>(1, static_cast<int64_t>(std::floor((1.0 - jitter) * d)) - 1))
            << "jitter " << jitter << " attempt " << attempt << " r " << r;
      }
    }
  }
}

TEST(Backoff, LargerDrawNeverGivesShorterDelay) {
  const auto p = policy(100, 5000, 0.5);
  for (uint32_t attempt = 0; attempt < 8; ++attempt) {
    auto prev = backoff_delay(p, attempt, 0.0);
    for (int i = 1; i <= 50; ++i) {
      const auto cur = backoff_delay(p, attempt, i / 50.0 - (i == 50 ? 1e-12 : 0.0));
      EXPECT_GE(cur, prev) << "attempt " << attempt << " step " << i;
      prev = cur;
    }
  }
}

TEST(Backoff, OutOfRangeJitterAndDrawAreClamped) {
  // jitter > 1 acts as 1, jitter < 0 as 0; draws outside [0, 1] are clamped.
  EXPECT_EQ(backoff_delay(policy(100, 5000, 7.0), 2, 0.0), milliseconds(1));
  EXPECT_EQ(backoff_delay(policy(100, 5000, -3.0), 2, 0.0), milliseconds(400));
  EXPECT_EQ(backoff_delay(policy(100, 5000, 0.5), 2, -5.0), milliseconds(200));
  EXPECT_EQ(backoff_delay(policy(100, 5000, 0.5), 2, 5.0), milliseconds(400));
}

TEST(Backoff, NeverBelowOneMillisecond) {
  EXPECT_EQ(backoff_delay(policy(0, 0, 0.0), 0, 0.0), milliseconds(1));
  EXPECT_EQ(backoff_delay(policy(0, 0, 0.5), 100, 0.5), milliseconds(1));
  EXPECT_EQ(backoff_delay(policy(1, 1, 1.0), 0, 0.0), milliseconds(1));
  EXPECT_EQ(backoff_delay(policy(1, 5000, 0.9), 0, 0.0), milliseconds(1));
  EXPECT_EQ(backoff_delay(policy(-50, -10, 0.0), 3, 0.0), milliseconds(1));
  for (uint32_t attempt = 0; attempt < 100; ++attempt) {
    EXPECT_GE(backoff_delay(policy(1, 5000, 1.0), attempt, 0.0), milliseconds(1)) << "attempt " << attempt;
  }
}

TEST(Backoff, HugeAttemptNumbersDoNotOverflow) {
  const auto p = policy(100, 5000, 0.0);
  for (uint32_t attempt : {30u, 31u, 32u, 61u, 62u, 63u, 64u, 1000u, 1u << 31, std::numeric_limits<uint32_t>::max()}) {
    EXPECT_EQ(backoff_delay(p, attempt, 0.0), milliseconds(5000)) << "attempt " << attempt;
  }
  const auto j = policy(100, 5000, 0.5);
  EXPECT_EQ(backoff_delay(j, std::numeric_limits<uint32_t>::max(), 0.0), milliseconds(2500));
  EXPECT_LE(backoff_delay(j, std::numeric_limits<uint32_t>::max(), kAlmostOne), milliseconds(5000));
}

TEST(Backoff, HugeCapDoesNotOverflow) {
  const int64_t huge = int64_t{1} << 50;  // about 35700 years, exactly representable as a double
  const auto p = policy(1000, huge, 0.0);
  EXPECT_EQ(backoff_delay(p, 10, 0.0), milliseconds(1000 * 1024));
  const auto got = backoff_delay(p, 61, 0.0);
  EXPECT_EQ(got.count(), huge);
}

TEST(RetryDelay, DoublesFromTheBaseWithoutJitter) {
  const BackoffPolicy p = policy(1000, 300000, 0.5);  // the jitter is ignored
  EXPECT_EQ(retry_delay(p, 1), milliseconds(1000));
  EXPECT_EQ(retry_delay(p, 2), milliseconds(2000));
  EXPECT_EQ(retry_delay(p, 3), milliseconds(4000));
  EXPECT_EQ(retry_delay(p, 9), milliseconds(256000));
}

TEST(RetryDelay, CappedAtTheMaximum) {
  const BackoffPolicy p = policy(1000, 300000, 0.0);
  EXPECT_EQ(retry_delay(p, 10), milliseconds(300000));
  EXPECT_EQ(retry_delay(p, 63), milliseconds(300000));
  EXPECT_EQ(retry_delay(p, std::numeric_limits<uint64_t>::max()), milliseconds(300000));
}

TEST(RetryDelay, AttemptZeroIsTreatedAsTheFirst) {
  EXPECT_EQ(retry_delay(policy(250, 1000, 0.0), 0), milliseconds(250));
}

TEST(RetryDelay, BaseAboveMaximumGivesTheMaximum) {
  EXPECT_EQ(retry_delay(policy(5000, 2000, 0.0), 1), milliseconds(2000));
}

}  // namespace
}  // namespace expiry
