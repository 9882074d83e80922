// base/integers.h and redis/redis_time.h: the one integer parser and the TIME decoder.
#include <gtest/gtest.h>

#include <limits>

#include "base/integers.h"
#include "redis/redis_time.h"

namespace expiry {
namespace {

TEST(Integers, ParsesWholeDecimalTexts) {
  EXPECT_EQ(parse_int64("0"), 0);
  EXPECT_EQ(parse_int64("-42"), -42);
  EXPECT_EQ(parse_int64("9223372036854775807"), 9223372036854775807LL);
  EXPECT_EQ(parse_int64("-9223372036854775808"), std::numeric_limits<long long>::min());
  EXPECT_EQ(parse_uint64("18446744073709551615"), 18446744073709551615ULL);
}

TEST(Integers, RejectsEverythingElse) {
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "1.5", "0x10", "1e3", "9223372036854775808",
                          "-9223372036854775809", "12a"}) {
    EXPECT_FALSE(parse_int64(bad)) << bad;
  }
  EXPECT_FALSE(parse_uint64("-1"));
  EXPECT_FALSE(parse_uint64("18446744073709551616"));
}

Reply time_reply(const char* seconds, const char* micros) {
  return Reply::of_array({Reply::of(Reply::Type::String, seconds), Reply::of(Reply::Type::String, micros)});
}

TEST(RedisTime, DecodesSecondsAndMicroseconds) {
  EXPECT_EQ(time_reply_us(time_reply("1700000000", "123456")), 1700000000123456LL);
  EXPECT_EQ(time_reply_ms(time_reply("1700000000", "123456")), 1700000000123LL);
}

TEST(RedisTime, RejectsMalformedReplies) {
  EXPECT_FALSE(time_reply_us(time_reply("1700000000", "1000000")));
  EXPECT_FALSE(time_reply_us(time_reply("-1", "0")));
  EXPECT_FALSE(time_reply_us(time_reply("x", "0")));
  EXPECT_FALSE(time_reply_us(time_reply("9223372036854775807", "0")));
  EXPECT_FALSE(time_reply_us(Reply{}));
  Reply one = time_reply("1", "2");
  one.elements.pop_back();
  EXPECT_FALSE(time_reply_us(one));
}

}  // namespace
}  // namespace expiry
