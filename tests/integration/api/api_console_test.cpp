// The console's API routes against a private redis-server (docs/api.md, "Web console"): the
// timeline's bars, the overview's figures (per bucket, activity, dead-letter reasons, groups,
// relays), a task's state (pending, fired with its acknowledgement, dead, unknown), reschedule,
// purge, recurring schedules, whoami, and the console's files with their headers.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "functions/key_layout.h"
#include "integration/api/api_harness.h"
#include "support/redis_client.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;

class ApiConsoleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<TestConnection>(server_.host(), server_.port());
    api_ = std::make_unique<ApiProcess>(server_);
  }

  HttpAnswer call(const std::string& method, const std::string& path, const std::string& token,
                  std::optional<std::string> body = std::nullopt) {
    return api_->call(ApiCall(method, path, token, std::move(body)));
  }
  json get(const std::string& path, const std::string& token = kReadToken) {
    const HttpAnswer r = call("GET", path, token);
    EXPECT_EQ(r.status, 200) << path << ": " << r.body;
    return json::parse(r.body, nullptr, false);
  }
  void put(const std::string& id, long long delay_ms, const std::string& extra = "") {
    const std::string body = "{\"delay_ms\": " + std::to_string(delay_ms) + ", \"payload\": \"p\"" + extra + "}";
    ASSERT_EQ(call("PUT", "/v1/tasks/" + id, kWriteToken, body).status, 201) << id;
  }

  RedisServer server_;
  std::unique_ptr<TestConnection> redis_;
  std::unique_ptr<ApiProcess> api_;
};

TEST_F(ApiConsoleTest, TimelineCountsEachTaskInItsBar) {
  put("in-2s", 2'000);        // minute bar 0, hour bar 0, day bar 0
  put("in-12s", 12'000);      // minute bar 2
  put("in-22min", 1'320'000); // hour bar 4 ((20, 25] min), day bar 0
  put("in-3h", 10'800'000);   // day bar 2 ((2h, 3h]: a little under 3 h by the time it is read)
  put("in-2d", 172'800'000);  // beyond
  const json t = get("/v1/timeline");
  ASSERT_EQ(t["ranges"].size(), 3u);
  const json& minute = t["ranges"][0];
  const json& hour = t["ranges"][1];
  const json& day = t["ranges"][2];
  EXPECT_EQ(minute["name"], "minute");
  EXPECT_EQ(minute["counts"].size(), 12u);
  EXPECT_EQ(minute["counts"][0], 1);
  EXPECT_EQ(minute["counts"][2], 1);
  EXPECT_EQ(hour["counts"][0], 2);
  EXPECT_EQ(hour["counts"][4], 1);
  long long day_total = 0;
  for (const auto& n : day["counts"]) day_total += n.get<long long>();
  EXPECT_EQ(day_total, 4);
  EXPECT_EQ(day["counts"][0], 3);
  EXPECT_EQ(day["counts"][2], 1);
  EXPECT_EQ(t["beyond"], 1);
  EXPECT_EQ(t["overdue"], 0);
  EXPECT_EQ(t["horizon_ms"], 86'400'000);
}

TEST_F(ApiConsoleTest, OverviewWithARelayAGroupAndDeadLetters) {
  auto relay = start_relay(server_, "console-relay");
  wait_relay_ready(*redis_, "console-relay", *relay);
  put("a", 3'600'000);
  put("b", 3'600'000);
  put("soon", 10);
  ASSERT_TRUE(wait_until([&] { return xlen(*redis_) >= 1; }, std::chrono::seconds(20)));
  redis_->command({"XADD", "expiry:stream:dead", "*", "id", "d1", "reason", "handler-failed", "deliveries", "5"});
  redis_->command({"XADD", "expiry:stream:dead", "*", "id", "d2", "reason", "handler-failed"});
  redis_->command({"XADD", "expiry:stream:dead", "*", "id", "d3", "reason", "late"});
  const json o = get("/v1/overview");
  EXPECT_EQ(o["pending"], 2);
  EXPECT_EQ(o["per_bucket"].size(), 1u);
  EXPECT_EQ(o["per_bucket"][0]["pending"], 2);
  EXPECT_EQ(o["per_bucket"][0]["paused"], false);
  EXPECT_EQ(o["dead"]["total"], 3);
  EXPECT_EQ(o["dead"]["by_reason"]["handler-failed"], 2);
  EXPECT_EQ(o["dead"]["by_reason"]["late"], 1);
  ASSERT_TRUE(o["activity"].is_object()) << o.dump();
  EXPECT_EQ(o["activity"]["sampled"], 1);
  EXPECT_GE(o["activity"]["lateness_p99_ms"].get<long long>(), 0);
  ASSERT_TRUE(o["relays"].is_object());
  EXPECT_EQ(o["relays"]["count"], 1);
  EXPECT_EQ(o["relays"]["instances"][0], "console-relay");
  ASSERT_EQ(o["groups"].size(), 1u);
  EXPECT_EQ(o["groups"][0]["name"], "workers");
  // A consumer reads the entry without acknowledging it: named, and the task's state says so.
  redis_->command({"XREADGROUP", "GROUP", "workers", "c1", "COUNT", "1", "STREAMS", "expiry:stream", ">"});
  const json o2 = get("/v1/overview");
  EXPECT_EQ(o2["groups"][0]["consumer_count"], 1);
  EXPECT_EQ(o2["groups"][0]["consumers"][0]["name"], "c1");
  json s = get("/v1/tasks/soon/state");
  EXPECT_EQ(s["state"], "fired");
  EXPECT_EQ(s["fired"]["fields"]["payload"], "p");
  EXPECT_EQ(s["fired"]["groups"][0]["state"], "delivered");
  EXPECT_EQ(s["fired"]["groups"][0]["consumer"], "c1");
  redis_->command({"XACK", "expiry:stream", "workers", s["fired"]["entry_id"].get<std::string>()});
  s = get("/v1/tasks/soon/state");
  EXPECT_EQ(s["fired"]["groups"][0]["state"], "acknowledged");
  // Paused: per bucket, until resumed (0).
  ASSERT_EQ(call("POST", "/v1/pause", kAdminToken).status, 200);
  const json o3 = get("/v1/overview");
  EXPECT_EQ(o3["paused_buckets"], 1);
  EXPECT_EQ(o3["per_bucket"][0]["paused_until_ms"], 0);
  EXPECT_EQ(relay->terminate(), 0);
  EXPECT_EQ(get("/v1/overview")["relays"]["count"], 0);
}

TEST_F(ApiConsoleTest, TaskStatePendingDeadAndUnknown) {
  put("pending%20one", 3'600'000);
  json s = get("/v1/tasks/pending%20one/state");
  EXPECT_EQ(s["state"], "pending");
  EXPECT_EQ(s["task"]["id"], "pending one");
  redis_->command({"XADD", "expiry:stream:dead", "*", "id", "gone", "reason", "handler-failed", "deliveries", "3"});
  s = get("/v1/tasks/gone/state");
  EXPECT_EQ(s["state"], "dead");
  EXPECT_EQ(s["dead"]["reason"], "handler-failed");
  EXPECT_EQ(s["dead"]["deliveries"], 3);
  s = get("/v1/tasks/never/state");
  EXPECT_EQ(s["state"], "unknown");
  EXPECT_EQ(s["scanned"]["dead"], 1);
}

TEST_F(ApiConsoleTest, RescheduleMovesTheDueTimeAndKeepsThePayload) {
  put("r", 3'600'000, ", \"max_late_ms\": 9000");
  HttpAnswer r = call("POST", "/v1/tasks/r/reschedule", kWriteToken, R"({"at_ms": 4102444800000})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["due_ms"], 4102444800000);
  const json t = get("/v1/tasks/r");
  EXPECT_EQ(t["due_ms"], 4102444800000);
  EXPECT_EQ(t["payload"], "p");
  EXPECT_EQ(t["max_late_ms"], 9000);
  EXPECT_EQ(call("POST", "/v1/tasks/r/reschedule", kReadToken, R"({"delay_ms": 1})").status, 403);
  EXPECT_EQ(call("POST", "/v1/tasks/nope/reschedule", kWriteToken, R"({"delay_ms": 1})").status, 404);
  EXPECT_EQ(call("POST", "/v1/tasks/r/reschedule", kWriteToken, R"({"delay_ms": 1, "at_ms": 2})").status, 400);
}

TEST_F(ApiConsoleTest, PurgeDeletesNamedDeadLettersForAdminsOnly) {
  const Reply id = redis_->command({"XADD", "expiry:stream:dead", "*", "id", "d", "reason", "x"});
  const std::string body = json{{"entries", {id.str, "1-1"}}}.dump();
  EXPECT_EQ(call("POST", "/v1/dead/purge", kWriteToken, body).status, 403);
  const HttpAnswer r = call("POST", "/v1/dead/purge", kAdminToken, body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["purged"], json::array({id.str}));
  EXPECT_EQ(json::parse(r.body)["gone"], json::array({"1-1"}));
  EXPECT_EQ(redis_->command({"XLEN", "expiry:stream:dead"}).integer, 0);
  EXPECT_EQ(call("POST", "/v1/dead/purge", kAdminToken, R"({"entries": ["not an entry"]})").status, 400);
}

TEST_F(ApiConsoleTest, RecurringSchedulesWithTheirNextOccurrence) {
  EXPECT_EQ(get("/v1/recurring")["count"], 0);
  const CtlRun set = run_ctl({"--redis-url", server_.url(), "recur", "set", "daily", "--cron", "0 6 * * *", "--tz",
                              "Europe/Paris", "--payload", "{}"});
  ASSERT_EQ(set.exit_code, 0) << set.output;
  const json r = get("/v1/recurring?limit=5");
  ASSERT_EQ(r["count"], 1);
  EXPECT_EQ(r["schedules"][0]["id"], "daily");
  EXPECT_EQ(r["schedules"][0]["tz"], "Europe/Paris");
  EXPECT_TRUE(r["schedules"][0]["next_ms"].is_number_integer());
  EXPECT_EQ(r["more"], false);
  EXPECT_EQ(call("GET", "/v1/recurring?limit=0", kReadToken).status, 400);
}

TEST_F(ApiConsoleTest, WhoAmIAndTheConsoleFiles) {
  EXPECT_EQ(get("/v1/whoami", kReadToken)["scope"], "read");
  EXPECT_EQ(get("/v1/whoami", kAdminToken)["scope"], "admin");
  EXPECT_EQ(call("GET", "/v1/whoami", "wrong-token-xxxxxxxxxxxx").status, 401);
  HttpAnswer page = call("GET", "/", "");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page.header("content-security-policy").find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_EQ(page.header("x-content-type-options"), "nosniff");
  EXPECT_EQ(page.header("x-frame-options"), "DENY");
  EXPECT_EQ(call("GET", "/console/app.js", "").header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(call("GET", "/console/nope.js", "").status, 404);
  const HttpAnswer data = call("GET", "/v1/stats", kReadToken);
  EXPECT_EQ(data.header("content-security-policy"), "default-src 'none'; frame-ancestors 'none'");
  EXPECT_EQ(data.header("x-content-type-options"), "nosniff");
}

}  // namespace
}  // namespace expiry::test
