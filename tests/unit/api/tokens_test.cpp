// The tokens file of expiry-api (src/api/tokens.h): its lines, its errors naming the line,
// the scopes' order and the bearer header.
#include "api/tokens.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

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
  ASSERT_TRUE(set.find(kRead) && set.find(kWrite) && set.find(kAdmin));
  EXPECT_EQ(set.find(kRead)->scope, Scope::Read);
  EXPECT_EQ(set.find(kWrite)->scope, Scope::Write);
  EXPECT_EQ(set.find(kAdmin)->scope, Scope::Admin);
  // Without name= each is named after its line; without prefix= or namespace= nothing narrows it.
  EXPECT_EQ(set.find(kRead)->name, "line-3");
  EXPECT_FALSE(set.find(kRead)->named);
  EXPECT_EQ(set.find(kAdmin)->name, "line-6");
  EXPECT_TRUE(set.find(kWrite)->allows_id("anything"));
  EXPECT_TRUE(set.find(kWrite)->ns.empty());
  EXPECT_FALSE(set.find("read-token-012345678"));  // a prefix
  EXPECT_FALSE(set.find(kRead + "x"));             // longer
  EXPECT_FALSE(set.find(""));
}

TEST(ApiTokens, ErrorsNameTheLine) {
  EXPECT_EQ(error_of("read " + kRead + "\nowner " + kWrite + "\n"),
            "tokens file t line 2: unknown scope (expected read, write or admin)");
  EXPECT_EQ(error_of("\n\nread\n"),
            "tokens file t line 3: expected `SCOPE TOKEN [name=NAME] [prefix=PREFIX]... [namespace=NS]` (scope "
            "read, write or admin), found 1 field");
  EXPECT_EQ(error_of("read " + kRead + " extra\n"),
            "tokens file t line 1: unknown option 'extra' (expected name=NAME, prefix=PREFIX or namespace=NS after "
            "`SCOPE TOKEN`)");
  EXPECT_EQ(error_of("write short\n"), "tokens file t line 1: token shorter than 16 characters");
  EXPECT_EQ(error_of("read " + kRead + "\nadmin " + kRead + "\n"), "tokens file t line 2: token listed twice");
  EXPECT_EQ(error_of("read caf\xc3\xa9-0123456789abcdef\n"),
            "tokens file t line 1: token holds characters other than visible ASCII");
  EXPECT_EQ(error_of("# nothing\n\n"), "tokens file t: no tokens (lines `SCOPE TOKEN`)");
  EXPECT_EQ(error_of(""), "tokens file t: no tokens (lines `SCOPE TOKEN`)");
}

TEST(ApiTokens, NamesPrefixesAndANamespace) {
  const TokenSet set = TokenSet::parse("write " + kWrite + " name=order-service prefix=order: prefix=refund:\n" +
                                           "admin " + kAdmin + " namespace=shop name=ops@example.org\n",
                                       "tokens file t");
  const TokenGrant* w = set.find(kWrite);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->name, "order-service");
  EXPECT_TRUE(w->named);
  EXPECT_EQ(w->prefixes, (std::vector<std::string>{"order:", "refund:"}));
  EXPECT_TRUE(w->allows_id("order:1"));
  EXPECT_TRUE(w->allows_id("refund:9"));
  EXPECT_FALSE(w->allows_id("orde"));
  EXPECT_FALSE(w->allows_id("invoice:1"));
  EXPECT_TRUE(w->covers_prefix("order:2026-"));
  EXPECT_FALSE(w->covers_prefix("ord"));
  const TokenGrant* a = set.find(kAdmin);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->name, "ops@example.org");
  EXPECT_EQ(a->ns, "shop");
  EXPECT_TRUE(a->prefixes.empty());
  EXPECT_EQ(set.count_for_other_namespaces("shop"), 0u);
  EXPECT_EQ(set.count_for_other_namespaces("expiry"), 1u);
}

TEST(ApiTokens, OptionErrorsNameTheLine) {
  EXPECT_EQ(error_of("read " + kRead + " name=a name=b\n"), "tokens file t line 1: name= given twice");
  EXPECT_EQ(error_of("read " + kRead + " name=\n"),
            "tokens file t line 1: a token name is 1 to 64 characters of A-Z a-z 0-9 . _ : @ -");
  EXPECT_EQ(error_of("read " + kRead + " name=" + std::string(65, 'n') + "\n"),
            "tokens file t line 1: a token name is 1 to 64 characters of A-Z a-z 0-9 . _ : @ -");
  EXPECT_EQ(error_of("read " + kRead + " name=a/b\n"),
            "tokens file t line 1: a token name is 1 to 64 characters of A-Z a-z 0-9 . _ : @ -");
  EXPECT_EQ(error_of("read " + kRead + " prefix=\n"), "tokens file t line 1: prefix= needs a task-id prefix");
  EXPECT_EQ(error_of("read " + kRead + " namespace=\n"), "tokens file t line 1: namespace= needs a namespace");
  EXPECT_EQ(error_of("read " + kRead + " namespace=a namespace=b\n"), "tokens file t line 1: namespace= given twice");
  EXPECT_EQ(error_of("read " + kRead + " scope=admin\n"),
            "tokens file t line 1: unknown option 'scope' (expected name=NAME, prefix=PREFIX or namespace=NS after "
            "`SCOPE TOKEN`)");
}

TEST(ApiTokens, AFileEveryUserMayReadIsWarnedOf) {
  char path[] = "/tmp/expiry-tokens-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_EQ(chmod(path, 0600), 0);
  EXPECT_FALSE(tokens_file_mode_warning(path));
  ASSERT_EQ(chmod(path, 0640), 0);
  EXPECT_FALSE(tokens_file_mode_warning(path));
  ASSERT_EQ(chmod(path, 0644), 0);
  const auto warning = tokens_file_mode_warning(path);
  ASSERT_TRUE(warning);
  EXPECT_EQ(*warning, std::string("the tokens file ") + path +
                          " may be read by every user of this machine (mode 0644): anyone here can take its tokens; "
                          "chmod 600 it");
  unlink(path);
  EXPECT_FALSE(tokens_file_mode_warning(path));  // gone: nothing to say
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
