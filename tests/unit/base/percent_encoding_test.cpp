// percent_decode and percent_encode_visible_ascii: escapes, malformed input, round trips.
#include "base/percent_encoding.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(PercentEncoding, Decode) {
  EXPECT_EQ(percent_decode("a%20b+c"), "a b+c");
  EXPECT_EQ(percent_decode("%41%6a"), "Aj");
  EXPECT_FALSE(percent_decode("%"));
  EXPECT_FALSE(percent_decode("%4"));
  EXPECT_FALSE(percent_decode("%4g"));
}

TEST(PercentEncoding, VisibleAsciiPassesUnchanged) {
  EXPECT_EQ(percent_encode_visible_ascii("order:42.1700000000000"), "order:42.1700000000000");
  EXPECT_EQ(percent_encode_visible_ascii("a/b?c=d&e#f~!"), "a/b?c=d&e#f~!");
}

TEST(PercentEncoding, EncodesEverythingAHeaderCouldMisread) {
  EXPECT_EQ(percent_encode_visible_ascii("a\r\nX-Evil: 1"), "a%0D%0AX-Evil:%201");
  EXPECT_EQ(percent_encode_visible_ascii("caf\xC3\xA9"), "caf%C3%A9");       // UTF-8 é
  EXPECT_EQ(percent_encode_visible_ascii(std::string("a\0b", 3)), "a%00b");
  EXPECT_EQ(percent_encode_visible_ascii("100%"), "100%25");                 // unambiguous
  EXPECT_EQ(percent_encode_visible_ascii("\t\x7F"), "%09%7F");
}

TEST(PercentEncoding, RoundTripsEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::string encoded = percent_encode_visible_ascii(all);
  for (const char c : encoded) {
    EXPECT_TRUE(c >= 0x21 && c <= 0x7E) << static_cast<int>(c);
  }
  EXPECT_EQ(percent_decode(encoded), all);
}

}  // namespace
}  // namespace expiry
