// The audit trail over HTTP (docs/api.md, "Audit trail") against a private redis-server: each
// write and admin request of a known token is recorded under the token's name, with its target
// and outcome, refusals included; reads are not; GET /v1/audit is for admin tokens only,
// filters and pages; both the pipelined path (the worker's async connection) and the blocking
// one record.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/api/api_harness.h"
#include "support/redis_client.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;

const std::string kOrderToken = "order-service-token-0123456789";
const std::string kOpsToken = "ops-admin-token-0123456789";

std::string tokens_text() {
  return tokens_file_text() + "write " + kOrderToken + " name=order-service prefix=order:\n" + "admin " + kOpsToken +
         " name=ops\n";
}

class ApiAuditTest : public ::testing::TestWithParam<std::string> {
 protected:
  HttpAnswer call(const std::string& method, const std::string& path, const std::string& token,
                  std::optional<std::string> body = std::nullopt) {
    return api_.call(ApiCall(method, path, token, std::move(body)));
  }
  static json body_of(const HttpAnswer& r) { return json::parse(r.body, nullptr, false); }
  // The newest records (GET /v1/audit), once `count` are there.
  json records(size_t count, const std::string& query = "") {
    json page;
    const bool there = wait_until(
        [&] {
          const HttpAnswer r = call("GET", "/v1/audit?count=100" + query, kOpsToken);
          page = body_of(r);
          return r.status == 200 && page["records"].size() >= count;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(20));
    EXPECT_TRUE(there) << page.dump();
    return page["records"];
  }

  RedisServer server_;
  // "pipelined": the defaults (task writes and records on the worker's async connection);
  // "blocking": --max-inflight 0, every request and record on the worker's blocking connection.
  // One worker: records of two workers' connections may reach Redis in either order.
  ApiProcess api_{ApiTarget{server_.url(), server_.dir(), "", tokens_text()},
                  GetParam() == "blocking" ? std::vector<std::string>{"--threads", "1", "--max-inflight", "0"}
                                           : std::vector<std::string>{"--threads", "1"}};
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_P(ApiAuditTest, WritesAndRefusalsAreRecordedUnderTheTokenNameAndReadsAreNot) {
  ASSERT_EQ(call("PUT", "/v1/tasks/order:1", kOrderToken, R"({"delay_ms": 600000, "payload": "secret"})").status, 201);
  ASSERT_EQ(call("GET", "/v1/tasks/order:1", kOrderToken).status, 200);  // a read
  ASSERT_EQ(call("GET", "/v1/stats", kReadToken).status, 200);            // a read
  ASSERT_EQ(call("DELETE", "/v1/tasks/order:1", kOrderToken).status, 204);
  ASSERT_EQ(call("DELETE", "/v1/tasks/order:1", kOrderToken).status, 404);
  ASSERT_EQ(call("PUT", "/v1/tasks/invoice:1", kOrderToken, R"({"delay_ms": 1000})").status, 403);
  ASSERT_EQ(call("PUT", "/v1/tasks/x", kReadToken, R"({"delay_ms": 1000})").status, 403);
  ASSERT_EQ(call("POST", "/v1/pause", kOpsToken, R"({"for_ms": 60000})").status, 200);
  ASSERT_EQ(call("POST", "/v1/resume", kOpsToken).status, 200);
  ASSERT_EQ(call("PUT", "/v1/tasks/y", "not-a-known-token-0123456789", R"({"delay_ms": 1000})").status, 401);

  const json r = records(7);
  ASSERT_EQ(r.size(), 7u) << r.dump();
  struct Expected {
    std::string actor, action, target, outcome;
  };
  const std::vector<Expected> expected = {  // newest first
      {"ops", "POST /v1/resume", "", "200"},
      {"ops", "POST /v1/pause", "for_ms=60000", "200"},
      {"line-2", "PUT /v1/tasks/{id}", "x", "403: this route needs a token of scope write; the token given has scope read"},
      {"order-service", "PUT /v1/tasks/{id}", "invoice:1",
       "403: token order-service may address only ids starting with 'order:', not 'invoice:1'"},
      {"order-service", "DELETE /v1/tasks/{id}", "order:1", "404: task order:1 is not pending"},
      {"order-service", "DELETE /v1/tasks/{id}", "order:1", "204"},
      {"order-service", "PUT /v1/tasks/{id}", "order:1", "201"}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r[i]["actor"], expected[i].actor) << r[i].dump();
    EXPECT_EQ(r[i]["via"], "api");
    EXPECT_EQ(r[i]["action"], expected[i].action) << r[i].dump();
    EXPECT_EQ(r[i]["target"], expected[i].target) << r[i].dump();
    EXPECT_EQ(r[i]["outcome"], expected[i].outcome) << r[i].dump();
  }
  EXPECT_EQ(r.dump().find("secret"), std::string::npos);  // payloads are not recorded
  EXPECT_EQ(redis_.command({"XLEN", "expiry:audit"}).integer, 7);
}

TEST_P(ApiAuditTest, OnlyAdminTokensReadTheTrailWhichFiltersAndPages) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(call("PUT", "/v1/tasks/order:" + std::to_string(i), kOrderToken, R"({"delay_ms": 600000})").status, 201);
  }
  ASSERT_EQ(call("POST", "/v1/pause", kOpsToken).status, 200);
  records(6);
  EXPECT_EQ(call("GET", "/v1/audit", kReadToken).status, 403);
  EXPECT_EQ(call("GET", "/v1/audit", kWriteToken).status, 403);
  EXPECT_EQ(call("GET", "/v1/audit", kOrderToken).status, 403);

  EXPECT_EQ(records(1, "&actor=ops").size(), 1u);
  EXPECT_EQ(records(5, "&action=PUT").size(), 5u);
  EXPECT_EQ(records(1, "&target=order:3").size(), 1u);
  HttpAnswer a = call("GET", "/v1/audit?via=cli", kOpsToken);
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(body_of(a)["count"], 0);

  a = call("GET", "/v1/audit?count=4", kOpsToken);
  ASSERT_EQ(a.status, 200) << a.body;
  json page = body_of(a);
  ASSERT_EQ(page["records"].size(), 4u);
  EXPECT_EQ(page["records"][0]["action"], "POST /v1/pause");
  a = call("GET", "/v1/audit?count=4&before=" + page["next_before"].get<std::string>(), kOpsToken);
  ASSERT_EQ(a.status, 200) << a.body;
  page = body_of(a);
  ASSERT_EQ(page["records"].size(), 2u) << a.body;
  EXPECT_EQ(page["records"][1]["target"], "order:0");

  for (const std::string bad : {"count=0", "count=1001", "count=x", "before=yesterday", "via=mail", "who=me"}) {
    EXPECT_EQ(call("GET", "/v1/audit?" + bad, kOpsToken).status, 400) << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, ApiAuditTest, ::testing::Values("pipelined", "blocking"));

}  // namespace
}  // namespace expiry::test
