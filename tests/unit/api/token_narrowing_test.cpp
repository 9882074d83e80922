// What a token narrowed by prefix= or namespace= may call (src/api/token_narrowing.h).
#include "api/token_narrowing.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

TokenGrant narrowed() {
  TokenGrant g;
  g.scope = Scope::Write;
  g.name = "order-service";
  g.named = true;
  g.prefixes = {"order:", "refund:"};
  return g;
}

std::optional<std::string> refusal(const TokenGrant& g, std::string_view method, std::string_view path,
                                   const std::string& query = "", const std::string& ns = "expiry") {
  return narrowing_refusal(g, match_route(method, path), ns, query);
}

TEST(TokenNarrowing, AnUnnarrowedTokenMayCallEveryRoute) {
  TokenGrant g;
  g.name = "line-1";
  EXPECT_FALSE(refusal(g, "GET", "/v1/stats"));
  EXPECT_FALSE(refusal(g, "PUT", "/v1/tasks/invoice:1"));
  EXPECT_FALSE(refusal(g, "GET", "/v1/tasks"));
}

TEST(TokenNarrowing, IdsWithinThePrefixesOnly) {
  const TokenGrant g = narrowed();
  EXPECT_FALSE(refusal(g, "PUT", "/v1/tasks/order:1"));
  EXPECT_FALSE(refusal(g, "GET", "/v1/tasks/refund:2/state"));
  EXPECT_FALSE(refusal(g, "POST", "/v1/tasks/order:1/run-now"));
  EXPECT_FALSE(refusal(g, "PUT", "/v1/schedules/order:nightly"));
  EXPECT_FALSE(refusal(g, "GET", "/v1/whoami"));
  EXPECT_FALSE(refusal(g, "POST", "/v1/schedules/preview"));
  EXPECT_EQ(refusal(g, "DELETE", "/v1/tasks/invoice:1"),
            "token order-service may address only ids starting with 'order:', 'refund:', not 'invoice:1'");
  EXPECT_TRUE(refusal(g, "POST", "/v1/schedules/invoice:nightly/pause"));
}

TEST(TokenNarrowing, AListOnlyWithAPrefixWithin) {
  const TokenGrant g = narrowed();
  EXPECT_FALSE(refusal(g, "GET", "/v1/tasks", "prefix=order%3A2026&count=10"));
  EXPECT_EQ(refusal(g, "GET", "/v1/tasks"),
            "token order-service may address only ids starting with 'order:', 'refund:', not a list without ?prefix=");
  EXPECT_TRUE(refusal(g, "GET", "/v1/tasks", "prefix=ord"));
}

TEST(TokenNarrowing, RoutesOverEveryTaskAreRefused) {
  const TokenGrant g = narrowed();
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/v1/stats"}, {"GET", "/v1/overview"}, {"GET", "/v1/dead"}, {"POST", "/v1/pause"},
           {"GET", "/v1/schedules"}, {"GET", "/v1/timeline"}}) {
    const auto r = refusal(g, method, path);
    ASSERT_TRUE(r) << path;
    EXPECT_NE(r->find("is limited to task-id prefixes and may not call " + path), std::string::npos) << *r;
  }
}

TEST(TokenNarrowing, ANamespaceOtherThanTheServedOneIsRefused) {
  TokenGrant g;
  g.name = "shop-reader";
  g.ns = "shop";
  EXPECT_FALSE(refusal(g, "GET", "/v1/stats", "", "shop"));
  EXPECT_EQ(refusal(g, "GET", "/v1/stats", "", "expiry"),
            "token shop-reader is for namespace 'shop'; this expiry-api serves 'expiry'");
  EXPECT_TRUE(refusal(g, "GET", "/v1/whoami", "", "expiry"));
}

}  // namespace
}  // namespace expiry
