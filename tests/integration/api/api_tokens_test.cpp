// Named and narrowed tokens (docs/api.md, "Tokens") against a private redis-server: /v1/whoami
// answers a token's name, prefix= keeps a token to its ids (and off the routes over every task),
// namespace= keeps it to an expiry-api serving that namespace, old `SCOPE TOKEN` lines keep
// working, and a tokens file every user may read is warned of at start.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "integration/api/api_harness.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;

const std::string kOrderToken = "order-service-token-0123456789";
const std::string kShopToken = "shop-admin-token-0123456789";
const std::string kHereToken = "here-admin-token-0123456789";

std::string tokens_text() {
  return tokens_file_text() + "write " + kOrderToken + " name=order-service prefix=order: prefix=refund:\n" +
         "admin " + kShopToken + " name=shop-ops namespace=shop\n" + "admin " + kHereToken +
         " namespace=expiry name=here-ops\n";
}

class ApiTokensTest : public ::testing::Test {
 protected:
  HttpAnswer call(const std::string& method, const std::string& path, const std::string& token,
                  std::optional<std::string> body = std::nullopt) {
    return api_.call(ApiCall(method, path, token, std::move(body)));
  }
  static json body_of(const HttpAnswer& r) { return json::parse(r.body, nullptr, false); }

  RedisServer server_;
  ApiProcess api_{ApiTarget{server_.url(), server_.dir(), "", tokens_text()}, {}};
};

TEST_F(ApiTokensTest, WhoamiAnswersTheNameAndWhatNarrowsTheToken) {
  HttpAnswer r = call("GET", "/v1/whoami", kOrderToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r), json::parse(R"({"scope": "write", "name": "order-service", "named": true,
                                        "prefixes": ["order:", "refund:"], "namespace": null})"));
  // An old `SCOPE TOKEN` line still works, named after its line.
  r = call("GET", "/v1/whoami", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r), json::parse(R"({"scope": "read", "name": "line-2", "named": false, "prefixes": [],
                                        "namespace": null})"));
  r = call("GET", "/v1/whoami", kHereToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r)["namespace"], "expiry");
}

TEST_F(ApiTokensTest, APrefixTokenWritesOnlyItsOwnIds) {
  HttpAnswer r = call("PUT", "/v1/tasks/order:1", kOrderToken, R"({"delay_ms": 600000, "payload": "p"})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = call("PUT", "/v1/tasks/invoice:1", kOrderToken, R"({"delay_ms": 600000, "payload": "p"})");
  ASSERT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(body_of(r)["detail"],
            "token order-service may address only ids starting with 'order:', 'refund:', not 'invoice:1'");
  EXPECT_EQ(call("GET", "/v1/tasks/invoice:1", kAdminToken).status, 404);  // nothing was written

  // Another's task can be neither read, nor cancelled, nor run.
  ASSERT_EQ(call("PUT", "/v1/tasks/invoice:2", kAdminToken, R"({"delay_ms": 600000, "payload": "p"})").status, 201);
  EXPECT_EQ(call("GET", "/v1/tasks/invoice:2", kOrderToken).status, 403);
  EXPECT_EQ(call("DELETE", "/v1/tasks/invoice:2", kOrderToken).status, 403);
  EXPECT_EQ(call("POST", "/v1/tasks/invoice:2/run-now", kOrderToken).status, 403);
  EXPECT_EQ(call("GET", "/v1/tasks/invoice:2", kAdminToken).status, 200);  // still pending

  EXPECT_EQ(call("GET", "/v1/tasks/order:1", kOrderToken).status, 200);
  EXPECT_EQ(call("DELETE", "/v1/tasks/order:1", kOrderToken).status, 204);
  EXPECT_EQ(call("GET", "/v1/tasks/order:1", kAdminToken).status, 404);
}

TEST_F(ApiTokensTest, APrefixTokenListsOnlyWithinItsPrefixesAndCannotReadEveryTask) {
  ASSERT_EQ(call("PUT", "/v1/tasks/order:7", kOrderToken, R"({"delay_ms": 600000})").status, 201);
  ASSERT_EQ(call("PUT", "/v1/tasks/invoice:7", kAdminToken, R"({"delay_ms": 600000})").status, 201);
  HttpAnswer r = call("GET", "/v1/tasks?prefix=order:", kOrderToken);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(body_of(r)["tasks"].size(), 1u) << r.body;
  EXPECT_EQ(body_of(r)["tasks"][0]["id"], "order:7");
  EXPECT_EQ(call("GET", "/v1/tasks", kOrderToken).status, 403);
  EXPECT_EQ(call("GET", "/v1/tasks?prefix=inv", kOrderToken).status, 403);
  for (const std::string path : {"/v1/stats", "/v1/overview", "/v1/dead", "/v1/schedules", "/v1/timeline"}) {
    r = call("GET", path, kOrderToken);
    EXPECT_EQ(r.status, 403) << path;
    EXPECT_NE(body_of(r)["detail"].get<std::string>().find("is limited to task-id prefixes"), std::string::npos)
        << r.body;
  }
  // Schedules within the prefixes are its own too.
  r = call("PUT", "/v1/schedules/order:nightly", kOrderToken, R"({"cron": "0 3 * * *", "tz": "UTC"})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(call("PUT", "/v1/schedules/report", kOrderToken, R"({"cron": "0 3 * * *", "tz": "UTC"})").status, 403);
  EXPECT_EQ(call("GET", "/v1/schedules/report", kAdminToken).status, 404);
}

TEST_F(ApiTokensTest, APrefixTokenBatchesAndActsInBulkOnlyWithinItsPrefixes) {
  HttpAnswer r = call("POST", "/v1/tasks/batch", kOrderToken,
                      R"({"tasks": [{"id": "order:b1", "delay_ms": 600000}, {"id": "invoice:b1", "delay_ms": 600000}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json results = body_of(r)["results"];
  ASSERT_EQ(results.size(), 2u) << r.body;
  EXPECT_EQ(results[0]["status"], 201) << r.body;
  EXPECT_EQ(results[1]["status"], 403) << r.body;
  EXPECT_EQ(call("GET", "/v1/tasks/order:b1", kAdminToken).status, 200);
  EXPECT_EQ(call("GET", "/v1/tasks/invoice:b1", kAdminToken).status, 404);

  ASSERT_EQ(call("PUT", "/v1/tasks/invoice:b2", kAdminToken, R"({"delay_ms": 600000})").status, 201);
  EXPECT_EQ(call("POST", "/v1/tasks/cancel", kOrderToken, R"({"prefix": "inv"})").status, 403);
  EXPECT_EQ(call("POST", "/v1/tasks/cancel", kOrderToken, R"({"prefix": "o"})").status, 403);  // wider than order:
  EXPECT_EQ(call("POST", "/v1/tasks/cancel", kOrderToken, R"({"due_to_ms": 4102444800000})").status, 403);
  EXPECT_EQ(call("POST", "/v1/tasks/run-now", kOrderToken, R"({"due_to_ms": 4102444800000})").status, 403);
  EXPECT_EQ(call("GET", "/v1/tasks/invoice:b2", kAdminToken).status, 200);  // untouched
  r = call("POST", "/v1/tasks/cancel", kOrderToken, R"({"prefix": "order:"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r)["cancelled"], 1) << r.body;
  EXPECT_EQ(call("GET", "/v1/tasks/order:b1", kAdminToken).status, 404);
}

TEST_F(ApiTokensTest, ANamespaceTokenWorksOnlyWhereItsNamespaceIsServed) {
  HttpAnswer r = call("GET", "/v1/stats", kShopToken);
  ASSERT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(body_of(r)["detail"], "token shop-ops is for namespace 'shop'; this expiry-api serves 'expiry'");
  EXPECT_EQ(call("PUT", "/v1/tasks/x", kShopToken, R"({"delay_ms": 600000})").status, 403);
  EXPECT_EQ(call("GET", "/v1/tasks/x", kAdminToken).status, 404);
  EXPECT_EQ(call("GET", "/v1/stats", kHereToken).status, 200);
}

TEST_F(ApiTokensTest, StartTellsOfAWorldReadableFileAndOfTokensForOtherNamespaces) {
  // The harness writes the tokens file with the default umask's mode 0644.
  const bool told = wait_until(
      [&] {
        const std::string out = api_.child().output();
        return out.find("may be read by every user of this machine (mode 0644)") != std::string::npos &&
               out.find("1 token of the tokens file is for another namespace than 'expiry'") != std::string::npos;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(20));
  EXPECT_TRUE(told) << api_.child().output();
}

}  // namespace
}  // namespace expiry::test
