// The tokens file of expiry-api (src/api/tokens.h): its lines, its errors naming the line,
// the scopes' order and the bearer header.
#include "api/tokens.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace expiry {
namespace {

const std::string kRead = "read-token-0123456789";
const std::string kWrite = "write-token-0123456789";
const std::string kAdmin = "admin-token-0123456789";

std::string error_of(const std::string& text) {
  try {
    TokenSet::parse(text, "tokens file t");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ApiTokens, ParsesScopesCommentsAndBlankLines) {
  const TokenSet set = TokenSet::parse(
      "# the API's tokens\n\nread " + kRead + "\r\n  write\t" + kWrite + "  \n# admin below\nadmin " + kAdmin,
      "tokens file t");
  EXPECT_EQ(set.size(), 3u);
  EXPECT_EQ(set.find(kRead), Scope::Read);
  EXPECT_EQ(set.find(kWrite), Scope::Write);
  EXPECT_EQ(set.find(kAdmin), Scope::Admin);
  EXPECT_FALSE(set.find("read-token-012345678"));  // a prefix
  EXPECT_FALSE(set.find(kRead + "x"));             // longer
  EXPECT_FALSE(set.find(""));
}

TEST(ApiTokens, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("read " + kRead + "\nowner " + kWrite + "\n"),
            "tokens file t line 2: unknown scope (expected read, write or admin)");
  EXPECT_EQ(error_of("\n\nread\n"),
            "tokens file t line 3: expected `SCOPE TOKEN` (scope read, write or admin), found 1 field");
  EXPECT_EQ(error_of("read " + kRead + " extra\n"),
            "tokens file t line 1: expected `SCOPE TOKEN` (scope read, write or admin), found 3 fields");
  EXPECT_EQ(error_of("write short\n"), "tokens file t line 1: token shorter than 16 characters");
  EXPECT_EQ(error_of("read " + kRead + "\nadmin " + kRead + "\n"), "tokens file t line 2: token listed twice");
  EXPECT_EQ(error_of("read caf\xc3\xa9-0123456789abcdef\n"),
            "tokens file t line 1: token holds characters other than visible ASCII");
  EXPECT_EQ(error_of("# nothing\n\n"), "tokens file t: no tokens (lines `SCOPE TOKEN`)");
  EXPECT_EQ(error_of(""), "tokens file t: no tokens (lines `SCOPE TOKEN`)");
}

TEST(ApiTokens, LoadNamesAMissingFile) {
  try {
    TokenSet::load("/nonexistent/expiry-api-tokens");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/expiry-api-tokens"), std::string::npos) << e.what();
  }
}

TEST(ApiTokens, ScopesIncludeTheLowerOnes) {
  EXPECT_TRUE(scope_allows(Scope::Read, Scope::Read));
  EXPECT_FALSE(scope_allows(Scope::Read, Scope::Write));
  EXPECT_FALSE(scope_allows(Scope::Read, Scope::Admin));
  EXPECT_TRUE(scope_allows(Scope::Write, Scope::Read));
  EXPECT_TRUE(scope_allows(Scope::Write, Scope::Write));
  EXPECT_FALSE(scope_allows(Scope::Write, Scope::Admin));
  EXPECT_TRUE(scope_allows(Scope::Admin, Scope::Read));
  EXPECT_TRUE(scope_allows(Scope::Admin, Scope::Write));
  EXPECT_TRUE(scope_allows(Scope::Admin, Scope::Admin));
  EXPECT_EQ(parse_scope("admin"), Scope::Admin);
  EXPECT_FALSE(parse_scope("Admin"));
}

TEST(ApiTokens, BearerHeader) {
  EXPECT_EQ(bearer_token("Bearer abc"), "abc");
  EXPECT_EQ(bearer_token("bearer   abc  "), "abc");
  EXPECT_EQ(bearer_token("BEARER abc"), "abc");
  EXPECT_FALSE(bearer_token("Basic abc"));
  EXPECT_FALSE(bearer_token("Bearer"));
  EXPECT_FALSE(bearer_token("Bearer "));
  EXPECT_FALSE(bearer_token("Bearerabc"));
  EXPECT_FALSE(bearer_token("Bearer a b"));
}

}  // namespace
}  // namespace expiry
