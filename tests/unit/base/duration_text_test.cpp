// parse_duration_ms: pause --for's durations.
#include "base/duration_text.h"

#include <string>

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(DurationText, BareDigitsAndMsAreMilliseconds) {
  EXPECT_EQ(parse_duration_ms("1500"), 1500);
  EXPECT_EQ(parse_duration_ms("1500ms"), 1500);
  EXPECT_EQ(parse_duration_ms("1"), 1);
}

TEST(DurationText, UnitsScaleToMilliseconds) {
  EXPECT_EQ(parse_duration_ms("30s"), 30000);
  EXPECT_EQ(parse_duration_ms("5m"), 300000);
  EXPECT_EQ(parse_duration_ms("2h"), 7200000);
  EXPECT_EQ(parse_duration_ms("007s"), 7000);
}

TEST(DurationText, ZeroIsRefusedSinceItWouldMeanUntilResumed) {
  EXPECT_FALSE(parse_duration_ms("0"));
  EXPECT_FALSE(parse_duration_ms("0s"));
}

TEST(DurationText, AnythingElseIsRefused) {
  for (const char* bad : {"", "s", "ms", "-5s", "+5s", "5 s", " 5s", "5s ", "1.5s", "5d", "5S", "5sec", "5mss",
                          "1e3", "0x10", "5m5s"}) {
    EXPECT_FALSE(parse_duration_ms(bad)) << bad;
  }
}

TEST(DurationText, TheLimitHoldsWithoutOverflow) {
  EXPECT_EQ(parse_duration_ms(std::to_string(kMaxDurationMs)), kMaxDurationMs);
  EXPECT_FALSE(parse_duration_ms(std::to_string(kMaxDurationMs + 1)));
  EXPECT_FALSE(parse_duration_ms("999999999999999999h"));
  EXPECT_FALSE(parse_duration_ms("9999999999999999999"));  // 19 digits
  EXPECT_EQ(parse_duration_ms("87840h"), 87840LL * 3600 * 1000);  // 3660 days: the limit, in hours
  EXPECT_FALSE(parse_duration_ms("87841h"));
}

}  // namespace
}  // namespace expiry
