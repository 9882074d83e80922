// Unit tests of the strict base64 codec (src/base/base64.h).
#include "base/base64.h"

#include <string>

#include <gtest/gtest.h>

namespace expiry {
namespace {

using namespace std::string_literals;

// The decoder's error for `text` ("" and a test failure if it decoded).
std::string error_of(const std::string& text) {
  std::string error;
  const auto decoded = base64_decode(text, &error);
  EXPECT_FALSE(decoded.has_value()) << "'" << text << "' decoded";
  return error;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string all_bytes() {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  return bytes;
}

TEST(Base64, Rfc4648TestVectors) {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},           {"f", "Zg=="},         {"fo", "Zm8="},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded) << plain;
    EXPECT_EQ(base64_decode(encoded), plain) << encoded;
  }
}

TEST(Base64, EveryByteValueRoundTrips) {
  const std::string bytes = all_bytes();
  const std::string encoded = base64_encode(bytes);
  EXPECT_EQ(encoded.size(), 344u);
  EXPECT_EQ(encoded.substr(0, 8), "AAECAwQF");
  EXPECT_EQ(encoded.substr(encoded.size() - 8), "/P3+/w==");
  EXPECT_EQ(base64_decode(encoded), bytes);
  // Every length mod 3, and every alphabet character, in both directions.
  for (size_t n = 0; n <= bytes.size(); ++n) {
    const std::string part = bytes.substr(bytes.size() - n);
    EXPECT_EQ(base64_decode(base64_encode(part)), part) << n;
  }
  EXPECT_EQ(base64_decode("+/+/"), "\xFB\xFF\xBF"s);
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  EXPECT_EQ(base64_encode(*base64_decode(alphabet)), alphabet);
}

TEST(Base64, PaddingIsRequired) {
  EXPECT_TRUE(contains(error_of("Zg"), "length 2 is not a multiple of 4")) << error_of("Zg");
  EXPECT_TRUE(contains(error_of("Zm8"), "length 3 is not a multiple of 4"));
  EXPECT_TRUE(contains(error_of("Zg="), "length 3"));
  EXPECT_TRUE(contains(error_of("Zm9vY"), "length 5"));
  EXPECT_TRUE(contains(error_of("Zm9vY="), "length 6"));
  EXPECT_EQ(error_of("Zg==="), "3 '=' at the end; padding is at most 2");
}

TEST(Base64, PaddingOnlyAtTheEnd) {
  EXPECT_EQ(error_of("Zg==Zg=="), "'=' at position 3 is not at the end");
  EXPECT_EQ(error_of("===="), "4 '=' at the end; padding is at most 2");
  EXPECT_EQ(error_of("Z==="), "3 '=' at the end; padding is at most 2");
  EXPECT_EQ(error_of("Zm=v"), "'=' at position 3 is not at the end");
}

TEST(Base64, InvalidCharactersNameTheirPosition) {
  EXPECT_EQ(error_of("Zm9v!A=="), "invalid character '!' at position 5");
  EXPECT_EQ(error_of("Zm9v-_=="), "invalid character '-' at position 5") << "the URL alphabet is not accepted";
  EXPECT_EQ(error_of("Zm9\xC3\xA9v=="), "invalid character '\\xc3' at position 4");
  EXPECT_EQ(error_of("Zm9v\0AAA"s), "invalid character '\\x00' at position 5");
  EXPECT_EQ(error_of("Zm9v\"AA="), "invalid character '\"' at position 5");
}

TEST(Base64, NoWhitespaceOrLineBreaks) {
  // Named as the character it is, whatever the length it leaves.
  EXPECT_EQ(error_of("Zm9v Zg=="), "invalid character ' ' at position 5");
  EXPECT_EQ(error_of("Zm9vZg==\n"), "invalid character '\\n' at position 9");
  EXPECT_EQ(error_of("Zm9v Zm9v   "), "invalid character ' ' at position 5");
  EXPECT_EQ(error_of("Zm9v\nZm9v   "), "invalid character '\\n' at position 5");
  EXPECT_EQ(error_of("Zm9vYmFy\r\n\r\n"), "invalid character '\\r' at position 9");
  EXPECT_EQ(error_of("\tZm9vYmF"), "invalid character '\\t' at position 1");
}

TEST(Base64, UnusedBitsMustBeZero) {
  // "Zg==" is the only form of "f"; "Zh==" .. "Zv==" carry bits that no byte uses.
  EXPECT_EQ(base64_decode("Zg=="), "f");
  EXPECT_TRUE(contains(error_of("Zh=="), "'h' at position 2, has non-zero unused bits")) << error_of("Zh==");
  EXPECT_TRUE(contains(error_of("Zm9="), "'9' at position 3, has non-zero unused bits"));
  EXPECT_EQ(base64_decode("Zm8="), "fo");
}

TEST(Base64, ErrorIsOptional) {
  EXPECT_FALSE(base64_decode("Zg").has_value());
  EXPECT_FALSE(base64_decode("Z!==").has_value());
}

}  // namespace
}  // namespace expiry
