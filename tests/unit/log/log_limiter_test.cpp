// Unit tests of the log-line rate limit (src/log/log_limiter.h), driven with fake time points.
#include "log/log_limiter.h"

#include <optional>

#include <gtest/gtest.h>

namespace expiry {
namespace {

using namespace std::chrono_literals;

// A fake "now": the steady clock's epoch plus an offset, so nothing depends on real time.
Clock::time_point at(std::chrono::milliseconds offset) { return Clock::time_point{} + 1h + offset; }

TEST(LogLimiter, FirstLineIsLoggedWithNothingDropped) {
  LogLimiter limiter(10s);
  EXPECT_EQ(limiter.allow(at(0ms)), std::optional<uint64_t>(0));
}

TEST(LogLimiter, FirstLineAtTheClockEpochIsLoggedToo) {
  // The limiter's "last logged" starts at the epoch; a first line there must not count as a repeat.
  LogLimiter limiter(10s);
  EXPECT_EQ(limiter.allow(Clock::time_point{}), std::optional<uint64_t>(0));
  EXPECT_EQ(limiter.allow(Clock::time_point{} + 1ms), std::nullopt);
}

TEST(LogLimiter, LinesWithinTheIntervalAreDroppedAndTheNextLoggedOneCountsThem) {
  LogLimiter limiter(10s);
  ASSERT_EQ(limiter.allow(at(0ms)), std::optional<uint64_t>(0));
  for (int i = 0; i < 2000; ++i) {
    EXPECT_EQ(limiter.allow(at(std::chrono::milliseconds(1 + i * 4))), std::nullopt) << "line " << i;
  }
  EXPECT_EQ(limiter.allow(at(9999ms)), std::nullopt);
  EXPECT_EQ(limiter.allow(at(10s)), std::optional<uint64_t>(2001));
}

TEST(LogLimiter, TheCountStartsAgainAfterEachLoggedLine) {
  LogLimiter limiter(10s);
  ASSERT_EQ(limiter.allow(at(0ms)), std::optional<uint64_t>(0));
  EXPECT_EQ(limiter.allow(at(1s)), std::nullopt);
  EXPECT_EQ(limiter.allow(at(2s)), std::nullopt);
  EXPECT_EQ(limiter.allow(at(12s)), std::optional<uint64_t>(2));
  EXPECT_EQ(limiter.allow(at(13s)), std::nullopt);
  EXPECT_EQ(limiter.allow(at(22s)), std::optional<uint64_t>(1));
  // A quiet period: the next line is logged with nothing dropped.
  EXPECT_EQ(limiter.allow(at(300s)), std::optional<uint64_t>(0));
}

TEST(LogLimiter, TheIntervalRunsFromTheLastLoggedLineNotTheLastDroppedOne) {
  LogLimiter limiter(10s);
  ASSERT_EQ(limiter.allow(at(0ms)), std::optional<uint64_t>(0));
  EXPECT_EQ(limiter.allow(at(9s)), std::nullopt);
  EXPECT_EQ(limiter.allow(at(10s)), std::optional<uint64_t>(1));  // not pushed back to 19 s by the drop at 9 s
}

TEST(LogLimiter, AtMostOneLinePerInterval) {
  LogLimiter limiter(10s);
  int logged = 0;
  uint64_t dropped_reported = 0;
  int calls = 0;
  for (auto t = 0ms; t < 60s; t += 7ms) {  // 60 s of lines every 7 ms
    ++calls;
    if (auto dropped = limiter.allow(at(t))) {
      ++logged;
      dropped_reported += *dropped;
    }
  }
  EXPECT_EQ(logged, 6);  // at 0, 10.003, 20.006 ... : one per 10 s
  // Every line is logged or counted by a later logged line, except those after the last logged
  // one (fewer than one interval's worth).
  const uint64_t accounted = dropped_reported + static_cast<uint64_t>(logged);
  const uint64_t per_interval = 10000 / 7 + 1;
  EXPECT_LE(accounted, static_cast<uint64_t>(calls));
  EXPECT_GT(accounted + per_interval, static_cast<uint64_t>(calls));
}

}  // namespace
}  // namespace expiry
