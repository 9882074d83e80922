// The recurring schedules over HTTP (docs/api.md, "Recurring schedules") against a private
// redis-server and a relay: PUT creates and replaces, GET shows the rule and its next
// occurrences, the list, pause and resume, the previews, DELETE, and the CLI's validation as 400s.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "integration/api/api_harness.h"
#include "support/redis_client.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;

class ApiSchedulesTest : public ::testing::Test {
 protected:
  HttpAnswer call(const std::string& method, const std::string& path, const std::string& token,
                  std::optional<std::string> body = std::nullopt) {
    return api_.call(ApiCall(method, path, token, std::move(body)));
  }
  json body_of(const HttpAnswer& r) { return json::parse(r.body, nullptr, false); }

  RedisServer server_;
  ApiProcess api_{server_};
};

TEST_F(ApiSchedulesTest, PutCreatesThenReplacesAndGetShowsTheNextOccurrences) {
  HttpAnswer r = call("PUT", "/v1/schedules/report", kWriteToken,
                      R"({"cron": "0 9 * * *", "tz": "Europe/Berlin", "payload": "daily"})");
  ASSERT_EQ(r.status, 201) << r.body;
  json j = body_of(r);
  EXPECT_EQ(j["id"], "report");
  EXPECT_EQ(j["replaced"], false);
  EXPECT_EQ(j["tz"], "Europe/Berlin");
  ASSERT_TRUE(j["armed_ms"].is_number_integer()) << r.body;
  EXPECT_NE(j["armed_local"].get<std::string>().find("T09:00:00.000+0"), std::string::npos) << r.body;

  r = call("GET", "/v1/schedules/report", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  j = body_of(r);
  EXPECT_EQ(j["payload"], "daily");
  EXPECT_EQ(j["paused"], false);
  ASSERT_EQ(j["next"].size(), 5u);
  EXPECT_EQ(j["next"][0]["utc_ms"], body_of(call("GET", "/v1/schedules/report", kReadToken))["armed_ms"]);
  for (size_t i = 1; i < 5; ++i) {
    EXPECT_GT(j["next"][i]["utc_ms"].get<long long>(), j["next"][i - 1]["utc_ms"].get<long long>());
  }

  r = call("PUT", "/v1/schedules/report", kWriteToken, R"({"every": "1h", "payload": "hourly"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r)["replaced"], true);
  EXPECT_EQ(body_of(call("GET", "/v1/schedules/report", kReadToken))["payload"], "hourly");
  // The armed occurrence is an ordinary task, as `expiry-ctl recur set` makes it.
  EXPECT_EQ(call("GET", "/v1/tasks/report", kReadToken).status, 200);
}

TEST_F(ApiSchedulesTest, TheCliValidationAnswers400AndWritesNothing) {
  const std::pair<const char*, const char*> bad[] = {
      {R"({"payload": "x"})", "exactly one of cron and every"},
      {R"({"cron": "0 9 * * *", "every": "1h"})", "exactly one of cron and every"},
      {R"({"every": "1"})", "every"},
      {R"({"every": "500ms"})", "every"},
      {R"({"cron": "0 9 * * *", "tz": "localtime"})", "tz"},
      {R"({"cron": "0 9 * * *", "tz": "Europe/Berln"})", "did you mean 'Europe/Berlin'"},
      {R"({"cron": "not a cron"})", ""},
      {R"({"cron": "0 9 * * *", "misfire": "sometimes"})", "misfire"},
      {R"({"cron": "0 9 * * *", "colour": "red"})", "unknown field"},
      {R"({"cron": "0 9 * * *", "end": 1000})", "end lies"},
  };
  for (const auto& [body, part] : bad) {
    const HttpAnswer r = call("PUT", "/v1/schedules/bad", kWriteToken, body);
    EXPECT_EQ(r.status, 400) << body << ": " << r.body;
    EXPECT_NE(r.body.find(part), std::string::npos) << body << ": " << r.body;
  }
  EXPECT_EQ(call("GET", "/v1/schedules/bad", kReadToken).status, 404);
  EXPECT_EQ(call("PUT", "/v1/schedules/s", kReadToken, R"({"every": "1h"})").status, 403);
  const HttpAnswer sub = call("PUT", "/v1/schedules/fast", kWriteToken, R"({"every": "500ms", "allow_sub_second": true})");
  EXPECT_EQ(sub.status, 201) << sub.body;
}

TEST_F(ApiSchedulesTest, PauseResumeListAndDelete) {
  ASSERT_EQ(call("PUT", "/v1/schedules/a", kWriteToken, R"({"every": "1h"})").status, 201);
  ASSERT_EQ(call("PUT", "/v1/schedules/b", kWriteToken, R"({"cron": "*/5 * * * *"})").status, 201);

  HttpAnswer r = call("POST", "/v1/schedules/a/pause", kWriteToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r)["changed"], true);
  EXPECT_EQ(body_of(call("POST", "/v1/schedules/a/pause", kWriteToken))["changed"], false);
  json a = body_of(call("GET", "/v1/schedules/a", kReadToken));
  EXPECT_EQ(a["paused"], true);
  EXPECT_TRUE(a["next"].empty());
  EXPECT_EQ(call("GET", "/v1/tasks/a", kReadToken).status, 404) << "a paused schedule has no armed task";

  r = call("POST", "/v1/schedules/a/resume", kWriteToken);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r)["changed"], true);
  EXPECT_TRUE(body_of(r)["armed_ms"].is_number_integer());
  EXPECT_EQ(call("GET", "/v1/tasks/a", kReadToken).status, 200);

  r = call("GET", "/v1/schedules", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json list = body_of(r);
  EXPECT_EQ(list["count"], 2);
  EXPECT_EQ(list["more"], false);
  r = call("GET", "/v1/schedules?limit=1", kReadToken);
  EXPECT_EQ(body_of(r)["count"], 1);
  EXPECT_EQ(body_of(r)["more"], true);

  EXPECT_EQ(call("DELETE", "/v1/schedules/a", kWriteToken).status, 200);
  EXPECT_EQ(call("DELETE", "/v1/schedules/a", kWriteToken).status, 404);
  EXPECT_EQ(call("GET", "/v1/schedules/a", kReadToken).status, 404);
  EXPECT_EQ(call("POST", "/v1/schedules/a/pause", kWriteToken).status, 404);
  EXPECT_EQ(call("GET", "/v1/tasks/a", kReadToken).status, 404) << "deleting a schedule cancels its armed task";
}

TEST_F(ApiSchedulesTest, PreviewsOfAStoredScheduleAndOfARuleNotStored) {
  HttpAnswer r = call("POST", "/v1/schedules/preview", kReadToken,
                      R"({"cron": "30 2 * * *", "tz": "Europe/Berlin", "from": "2026-03-28T12:00:00Z", "count": 3})");
  ASSERT_EQ(r.status, 200) << r.body;
  const json occurrences = body_of(r)["occurrences"];
  ASSERT_EQ(occurrences.size(), 3u) << r.body;
  // The spring-forward gap of 2026-03-29: 02:30 does not exist, the job fires at 03:00+02:00.
  EXPECT_EQ(occurrences[0]["local"], "2026-03-29T03:00:00.000+02:00") << r.body;
  EXPECT_EQ(call("POST", "/v1/schedules/preview", kReadToken, R"({"cron": "0 9 * * *", "count": 0})").status, 400);
  EXPECT_EQ(call("POST", "/v1/schedules/preview", kReadToken, R"({"every": "1"})").status, 400);

  ASSERT_EQ(call("PUT", "/v1/schedules/p", kWriteToken, R"({"every": "15m"})").status, 201);
  r = call("GET", "/v1/schedules/p/preview?count=7", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  const json next = body_of(r)["occurrences"];
  ASSERT_EQ(next.size(), 7u);
  EXPECT_EQ(next[1]["utc_ms"].get<long long>() - next[0]["utc_ms"].get<long long>(), 15 * 60 * 1000);
  EXPECT_EQ(call("GET", "/v1/schedules/p/preview?count=5000", kReadToken).status, 400);
  EXPECT_EQ(call("GET", "/v1/schedules/none/preview", kReadToken).status, 404);
}

TEST_F(ApiSchedulesTest, AScheduleFiresThroughTheRelayLikeOneTheCliMade) {
  auto relay = start_relay(server_, "schedules-relay");
  TestConnection redis(server_.host(), server_.port());
  wait_relay_ready(redis, "schedules-relay", *relay);
  ASSERT_EQ(call("PUT", "/v1/schedules/tick", kWriteToken, R"({"every": "1s", "payload": "tick"})").status, 201);
  ASSERT_TRUE(wait_until([&] { return xlen(redis) >= 2; }, std::chrono::seconds(30)))
      << "no two occurrences forwarded: " << relay->output();
  const auto entries = xrange_all(redis, "expiry:stream");
  EXPECT_EQ(entries[0].at("payload"), "tick");
  EXPECT_EQ(entries[0].at("id"), "tick");
  ASSERT_EQ(call("DELETE", "/v1/schedules/tick", kWriteToken).status, 200);
}

}  // namespace
}  // namespace expiry::test
