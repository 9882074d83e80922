// expiry-api's batches and bulk actions (docs/api.md, "Batches and bulk actions") against a
// private redis-server: POST /v1/tasks/batch writes the good tasks of a batch and answers each
// task's own result in order; POST /v1/tasks/cancel and /v1/tasks/run-now by prefix or due
// range act on the matching tasks only, a bounded number per call, going on with a cursor; and
// run-now's tasks reach the stream through a relay, once each.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "integration/api/api_harness.h"
#include "support/redis_client.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;
constexpr long long kFar = 4102444800000;  // 2100-01-01
constexpr long long kHour = 3600000;

json body_of(const HttpAnswer& r) { return json::parse(r.body, nullptr, false); }

// The answer is a problem of `status` (application/problem+json whose detail holds `part`).
void expect_problem(const HttpAnswer& r, long status, const std::string& part, const std::string& what) {
  EXPECT_EQ(r.status, status) << what << ": " << r.body << r.error;
  EXPECT_EQ(r.header("content-type"), "application/problem+json") << what;
  EXPECT_NE(body_of(r).value("detail", "").find(part), std::string::npos) << what << ": " << r.body;
}

std::string batch_of(const std::vector<json>& tasks) { return json{{"tasks", tasks}}.dump(); }

// expiry-api on its own redis-server, with `buckets` buckets in its namespace.
class BulkSetup {
 public:
  explicit BulkSetup(int buckets = 1)
      : buckets_(buckets),
        api_(server_, buckets == 1 ? std::vector<std::string>{}
                                   : std::vector<std::string>{"--buckets", std::to_string(buckets)}),
        redis_(server_.host(), server_.port()) {}

  HttpAnswer call(const std::string& method, const std::string& path, const std::string& token,
                  std::optional<std::string> body = std::nullopt) {
    return api_.call(ApiCall(method, path, token, std::move(body)));
  }
  HttpAnswer batch(const std::vector<json>& tasks, const std::string& token = kWriteToken) {
    return call("POST", "/v1/tasks/batch", token, batch_of(tasks));
  }
  // POST /v1/tasks/<action> with `body`; the answer's JSON (null when it is not 200).
  json act(const std::string& action, const json& body) {
    const HttpAnswer r = call("POST", "/v1/tasks/" + action, kWriteToken, body.dump());
    EXPECT_EQ(r.status, 200) << action << " " << body.dump() << ": " << r.body;
    return r.status == 200 ? body_of(r) : json();
  }
  // The task's score in its bucket's schedule ZSET, or nullopt when it is not pending.
  std::optional<long long> due_of(const std::string& id) {
    for (int b = 0; b < buckets_; ++b) {
      const Reply r = redis_.command({"ZSCORE", KeyLayout("expiry", b).schedule_key(), id});
      if (r.type == Reply::Type::String) return std::stoll(r.str);
    }
    return std::nullopt;
  }
  long long pending() {
    long long n = 0;
    for (int b = 0; b < buckets_; ++b) n += integer(redis_, {"ZCARD", KeyLayout("expiry", b).schedule_key()});
    return n;
  }

  int buckets_;
  RedisServer server_;
  ApiProcess api_;
  TestConnection redis_;
};

class ApiBulkTest : public ::testing::Test {
 protected:
  BulkSetup s_;
};

TEST_F(ApiBulkTest, ABatchWritesEveryTaskAndAnswersInOrder) {
  HttpAnswer r = s_.batch({{{"id", "order/3"}, {"at_ms", kFar}, {"payload", "three"}},
                           {{"id", "order/1"}, {"at_ms", kFar + 1}, {"payload_b64", "AAH/"}, {"max_late_ms", 5000}},
                           {{"id", "order/2"}, {"delay_ms", kHour}, {"stream", "orders"}}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  json j = body_of(r);
  EXPECT_EQ(j["written"], 3);
  EXPECT_EQ(j["failed"], 0);
  ASSERT_EQ(j["results"].size(), 3u) << r.body;
  const char* ids[] = {"order/3", "order/1", "order/2"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(j["results"][i]["id"], ids[i]) << r.body;
    EXPECT_EQ(j["results"][i]["status"], 201) << r.body;
    EXPECT_EQ(j["results"][i]["replaced"], false);
    EXPECT_EQ(s_.due_of(ids[i]), j["results"][i]["due_ms"].get<long long>()) << ids[i];
  }
  EXPECT_EQ(j["results"][0]["due_ms"], kFar);
  EXPECT_EQ(j["results"][1]["due_ms"], kFar + 1);
  const json shown = body_of(s_.call("GET", "/v1/tasks/order%2F2", kReadToken));
  EXPECT_EQ(shown["stream"], "orders") << shown.dump();
  EXPECT_EQ(body_of(s_.call("GET", "/v1/tasks/order%2F1", kReadToken))["payload_b64"], "AAH/");

  // A second batch: a replace (200), a kept if_absent (200) and a new task (201), as PUT answers.
  r = s_.batch({{{"id", "order/3"}, {"at_ms", kFar + 5}},
                {{"id", "order/1"}, {"at_ms", kFar + 9}, {"if_absent", true}},
                {{"id", "order/4"}, {"at_ms", kFar}}});
  ASSERT_EQ(r.status, 200) << r.body;
  j = body_of(r);
  EXPECT_EQ(j["results"][0]["status"], 200);
  EXPECT_EQ(j["results"][0]["replaced"], true);
  EXPECT_EQ(j["results"][1]["status"], 200);
  EXPECT_EQ(j["results"][1]["kept"], true);
  EXPECT_EQ(j["results"][2]["status"], 201);
  EXPECT_EQ(s_.due_of("order/3"), kFar + 5);
  EXPECT_EQ(s_.due_of("order/1"), kFar + 1) << "if_absent kept the pending task";
  EXPECT_EQ(s_.pending(), 4);
}

TEST_F(ApiBulkTest, OneBadTaskDoesNotFailTheOthers) {
  const HttpAnswer r = s_.batch({{{"id", "good-1"}, {"at_ms", kFar}},
                                 {{"id", std::string("bad\x01id")}, {"at_ms", kFar}},
                                 {{"id", "bad-payload"}, {"at_ms", kFar}, {"payload_b64", "***"}},
                                 {{"id", "bad-field"}, {"at_ms", kFar}, {"colour", "red"}},
                                 {{"id", "bad-stream"}, {"at_ms", kFar}, {"stream", "expiry:{0}:mine"}},
                                 {{"at_ms", kFar}},
                                 {{"id", "good-2"}, {"delay_ms", kHour}, {"payload", "p"}}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json j = body_of(r);
  EXPECT_EQ(j["written"], 2);
  EXPECT_EQ(j["failed"], 5);
  const json& results = j["results"];
  ASSERT_EQ(results.size(), 7u) << r.body;
  EXPECT_EQ(results[0]["status"], 201);
  EXPECT_EQ(results[6]["status"], 201);
  EXPECT_EQ(results[6]["id"], "good-2");
  for (size_t i = 1; i <= 5; ++i) {
    EXPECT_EQ(results[i]["status"], 400) << results[i].dump();
    EXPECT_FALSE(results[i].value("error", "").empty()) << results[i].dump();
    EXPECT_FALSE(results[i].contains("due_ms")) << results[i].dump();
  }
  EXPECT_NE(results[2]["error"].get<std::string>().find("payload_b64"), std::string::npos);
  EXPECT_EQ(results[3]["error"], "unknown field \"colour\"");
  EXPECT_NE(results[4]["error"].get<std::string>().find("task key space"), std::string::npos);
  EXPECT_EQ(results[4]["id"], "bad-stream");
  EXPECT_TRUE(results[5]["id"].is_null());
  EXPECT_EQ(s_.due_of("good-1"), kFar);
  EXPECT_TRUE(s_.due_of("good-2"));
  EXPECT_EQ(s_.pending(), 2) << "only the good tasks were written";
}

TEST_F(ApiBulkTest, AnEmptyBatchAnswersNoResults) {
  const HttpAnswer r = s_.call("POST", "/v1/tasks/batch", kWriteToken, R"({"tasks": []})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r), (json{{"results", json::array()}, {"written", 0}, {"failed", 0}}));
}

TEST_F(ApiBulkTest, AThousandTasksAreWrittenAndOneMoreIsRefusedWhole) {
  std::vector<json> tasks;
  for (int i = 0; i < 1001; ++i) tasks.push_back({{"id", "t" + std::to_string(i)}, {"at_ms", kFar + i}});
  expect_problem(s_.batch(tasks), 413, "at most 1000", "1001 tasks");
  EXPECT_EQ(s_.pending(), 0) << "nothing was written";

  tasks.pop_back();
  const HttpAnswer r = s_.batch(tasks);
  ASSERT_EQ(r.status, 200) << r.body.substr(0, 500);
  const json j = body_of(r);
  EXPECT_EQ(j["written"], 1000);
  ASSERT_EQ(j["results"].size(), 1000u);
  for (int i = 0; i < 1000; i += 137) {
    EXPECT_EQ(j["results"][i]["id"], "t" + std::to_string(i));
    EXPECT_EQ(j["results"][i]["due_ms"], kFar + i);
  }
  EXPECT_EQ(s_.pending(), 1000);
  EXPECT_EQ(s_.due_of("t999"), kFar + 999);
}

TEST_F(ApiBulkTest, ABodyThatIsNotABatchIs400AndWritesNothing) {
  for (const char* body : {"nope", "[]", "{}", R"({"tasks": 5})", R"({"tasks": {"id": "a", "at_ms": 1}})",
                           R"({"tasks": [], "atomic": true})"}) {
    expect_problem(s_.call("POST", "/v1/tasks/batch", kWriteToken, body), 400, "", body);
  }
  expect_problem(s_.call("POST", "/v1/tasks/batch", kWriteToken), 400, "", "no body");
  EXPECT_EQ(s_.pending(), 0);
}

TEST_F(ApiBulkTest, TheBulkRoutesNeedAWriteToken) {
  ASSERT_EQ(s_.batch({{{"id", "kept"}, {"at_ms", kFar}}}).status, 200);
  const std::pair<const char*, const char*> calls[] = {
      {"/v1/tasks/batch", R"({"tasks": [{"id": "x", "at_ms": 4102444800000}]})"},
      {"/v1/tasks/cancel", R"({"prefix": "k"})"},
      {"/v1/tasks/run-now", R"({"due_to_ms": 4102444800001})"},
  };
  for (const auto& [path, body] : calls) {
    expect_problem(s_.call("POST", path, kReadToken, body), 403, "scope write", path);
    EXPECT_EQ(s_.call("POST", path, "", body).status, 401) << path;
  }
  EXPECT_FALSE(s_.due_of("x")) << "nothing was written";
  EXPECT_EQ(s_.due_of("kept"), kFar) << "nothing was cancelled or run";
  EXPECT_EQ(s_.batch({{{"id", "x"}, {"at_ms", kFar}}}, kAdminToken).status, 200) << "admin includes write";
  EXPECT_EQ(s_.due_of("x"), kFar);
}

// GET, PUT and DELETE of /v1/tasks/batch, /cancel and /run-now address the tasks so named.
TEST_F(ApiBulkTest, TasksNamedLikeTheBulkRoutesAreStillTasks) {
  for (const char* name : {"batch", "cancel", "run-now"}) {
    const std::string path = std::string("/v1/tasks/") + name;
    HttpAnswer r = s_.call("PUT", path, kWriteToken, json{{"at_ms", kFar}}.dump());
    ASSERT_EQ(r.status, 201) << name << ": " << r.body;
    EXPECT_EQ(s_.due_of(name), kFar);
    EXPECT_EQ(body_of(s_.call("GET", path, kReadToken))["id"], name);
    EXPECT_EQ(s_.call("DELETE", path, kWriteToken).status, 204) << name;
    EXPECT_FALSE(s_.due_of(name));
  }
}

TEST_F(ApiBulkTest, CancelByPrefixRemovesOnlyTheMatchingTasks) {
  std::vector<json> tasks;
  for (int i = 0; i < 5; ++i) tasks.push_back({{"id", "order:" + std::to_string(i)}, {"at_ms", kFar + i}});
  for (int i = 0; i < 3; ++i) tasks.push_back({{"id", "other:" + std::to_string(i)}, {"at_ms", kFar + i}});
  tasks.push_back({{"id", "orde"}, {"at_ms", kFar}});
  ASSERT_EQ(body_of(s_.batch(tasks))["written"], 9);

  const json j = s_.act("cancel", {{"prefix", "order:"}});
  EXPECT_EQ(j["cancelled"], 5) << j.dump();
  EXPECT_EQ(j["examined"], 9) << j.dump();
  EXPECT_EQ(j["more"], false);
  EXPECT_TRUE(j["next_cursor"].is_null());
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(s_.due_of("order:" + std::to_string(i))) << i;
  EXPECT_EQ(s_.call("GET", "/v1/tasks/order:0", kReadToken).status, 404) << "the task's keys are gone too";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s_.due_of("other:" + std::to_string(i)), kFar + i);
  EXPECT_EQ(s_.due_of("orde"), kFar);
  EXPECT_EQ(s_.act("cancel", {{"prefix", "order:"}})["cancelled"], 0) << "nothing is left to cancel";
}

TEST_F(ApiBulkTest, CancelByDueRangeTakesFromInclusiveToExclusive) {
  std::vector<json> tasks;
  for (int i = 0; i < 10; ++i) tasks.push_back({{"id", "r" + std::to_string(i)}, {"at_ms", kFar + i * 1000}});
  ASSERT_EQ(body_of(s_.batch(tasks))["written"], 10);

  json j = s_.act("cancel", {{"due_from_ms", kFar + 2000}, {"due_to_ms", kFar + 5000}});
  EXPECT_EQ(j["cancelled"], 3) << j.dump();
  EXPECT_EQ(j["more"], false);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(s_.due_of("r" + std::to_string(i)).has_value(), i < 2 || i >= 5) << "r" << i;
  }
  // One bound alone: everything due before it, or from it on.
  EXPECT_EQ(s_.act("cancel", {{"due_to_ms", kFar + 1000}})["cancelled"], 1);
  EXPECT_FALSE(s_.due_of("r0"));
  EXPECT_EQ(s_.act("cancel", {{"due_from_ms", kFar + 8000}})["cancelled"], 2);
  EXPECT_EQ(s_.pending(), 4);  // r1, r5, r6, r7
}

TEST_F(ApiBulkTest, BothFormsOrNeitherIs400AndChangesNothing) {
  ASSERT_EQ(s_.batch({{{"id", "a1"}, {"delay_ms", kHour}}}).status, 200);
  const auto before = s_.due_of("a1");
  for (const char* action : {"cancel", "run-now"}) {
    const std::string path = std::string("/v1/tasks/") + action;
    for (const char* body : {"{}", R"({"prefix": "a", "due_to_ms": 4102444800000})",
                             R"({"prefix": "a", "due_from_ms": 1, "due_to_ms": 4102444800000})", R"({"limit": 5})"}) {
      expect_problem(s_.call("POST", path, kWriteToken, body), 400, "exactly one form", path + " " + body);
    }
    expect_problem(s_.call("POST", path, kWriteToken, R"({"prefix": ""})"), 400, "prefix", path);
    expect_problem(s_.call("POST", path, kWriteToken, R"({"due_from_ms": 9, "due_to_ms": 9})"), 400, "less than", path);
    expect_problem(s_.call("POST", path, kWriteToken, R"({"prefix": "a", "limit": 10001})"), 400, "limit", path);
    expect_problem(s_.call("POST", path, kWriteToken, R"({"prefix": "a", "cursor": "x"})"), 400, "cursor", path);
    expect_problem(s_.call("POST", path, kWriteToken, R"({"prefix": "a", "cursor": "1/"})"), 400, "bucket 1", path);
    expect_problem(s_.call("POST", path, kWriteToken, "nope"), 400, "JSON", path);
  }
  EXPECT_EQ(s_.due_of("a1"), before);
}

// More matching tasks than one call may examine: each answer says more remain and where to go
// on; calling again with its cursor finishes, across the buckets, every task acted on once.
TEST(ApiBulkBuckets, ABoundedCancelGoesOnWithItsCursorAcrossTheBuckets) {
  BulkSetup s(4);
  std::vector<json> tasks;
  for (int i = 0; i < 30; ++i) tasks.push_back({{"id", "bulk:" + std::to_string(i)}, {"at_ms", kFar + i}});
  for (int i = 0; i < 10; ++i) tasks.push_back({{"id", "keep:" + std::to_string(i)}, {"at_ms", kFar + i}});
  ASSERT_EQ(body_of(s.batch(tasks))["written"], 40);
  ASSERT_EQ(s.pending(), 40);
  std::set<int> buckets_used;
  for (int b = 0; b < 4; ++b) {
    if (integer(s.redis_, {"ZCARD", KeyLayout("expiry", b).schedule_key()}) > 0) buckets_used.insert(b);
  }
  EXPECT_GT(buckets_used.size(), 1u) << "the tasks should spread over the buckets";

  json body = {{"prefix", "bulk:"}, {"limit", 7}};
  long long cancelled = 0;
  int calls = 0;
  while (true) {
    const json j = s.act("cancel", body);
    ASSERT_TRUE(j.is_object());
    ++calls;
    EXPECT_LE(j["examined"].get<long long>(), 7) << j.dump();
    cancelled += j["cancelled"].get<long long>();
    if (calls == 1) {
      EXPECT_EQ(j["more"], true) << j.dump();
      EXPECT_EQ(s.pending(), 40 - j["cancelled"].get<long long>()) << "the first call stopped at its bound";
    }
    if (!j["more"].get<bool>()) {
      EXPECT_TRUE(j["next_cursor"].is_null());
      break;
    }
    ASSERT_TRUE(j["next_cursor"].is_string()) << j.dump();
    body["cursor"] = j["next_cursor"];
    ASSERT_LT(calls, 40) << "the walk does not end";
  }
  EXPECT_GE(calls, 6) << "40 tasks, 7 examined per call";
  EXPECT_EQ(cancelled, 30);
  EXPECT_EQ(s.pending(), 10);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.due_of("keep:" + std::to_string(i)), kFar + i);

  // Without a limit one call walks every bucket.
  const json all = s.act("cancel", {{"prefix", "keep:"}});
  EXPECT_EQ(all["cancelled"], 10);
  EXPECT_EQ(all["more"], false);
  EXPECT_EQ(s.pending(), 0);
}

// run-now by prefix and by due range: only the matching tasks not yet due are made due now,
// and the relay forwards each of them once; the others keep their due times.
TEST(ApiBulkRelay, RunNowByPrefixAndByDueRangeForwardsTheMatchingTasksOnce) {
  BulkSetup s;
  auto relay = start_relay(s.server_, "bulk-relay");
  wait_relay_ready(s.redis_, "bulk-relay", *relay);
  const long long base = redis_now_ms(s.redis_) + 2 * kHour;
  std::vector<json> tasks;
  for (int i = 0; i < 3; ++i)
    tasks.push_back({{"id", "now:" + std::to_string(i)}, {"delay_ms", kHour}, {"payload", "p"}});
  for (int i = 0; i < 5; ++i) {
    tasks.push_back({{"id", "r" + std::to_string(i)}, {"at_ms", base + i * 1000}, {"payload", "r"}});
  }
  tasks.push_back({{"id", "later"}, {"delay_ms", kHour}, {"payload", "l"}});
  ASSERT_EQ(body_of(s.batch(tasks))["written"], 9);

  // The range [base+1000, base+3000): r1 and r2, in one bounded call and then with its cursor.
  json j = s.act("run-now", {{"due_from_ms", base + 1000}, {"due_to_ms", base + 3000}, {"limit", 1}});
  EXPECT_EQ(j["more"], true) << j.dump();
  long long promoted = j["promoted"].get<long long>();
  for (int calls = 0; j["more"] == true && calls < 20; ++calls) {
    j = s.act("run-now",
              {{"due_from_ms", base + 1000}, {"due_to_ms", base + 3000}, {"limit", 1}, {"cursor", j["next_cursor"]}});
    ASSERT_TRUE(j.is_object());
    promoted += j["promoted"].get<long long>();
  }
  EXPECT_EQ(j["more"], false);
  EXPECT_EQ(promoted, 2);
  j = s.act("run-now", {{"prefix", "now:"}});
  EXPECT_EQ(j["promoted"], 3) << j.dump();
  EXPECT_EQ(j["more"], false);

  ASSERT_TRUE(wait_until([&] { return xlen(s.redis_) >= 5; }, std::chrono::seconds(20)))
      << "the promoted tasks were not forwarded: " << relay->output();
  ASSERT_TRUE(wait_until([&] { return s.pending() == 4; }, std::chrono::seconds(20)));
  expect_exactly_once(xrange_all(s.redis_, KeyLayout("expiry").default_stream()),
                      {{"now:0", "p"}, {"now:1", "p"}, {"now:2", "p"}, {"r1", "r"}, {"r2", "r"}});
  for (int i : {0, 3, 4}) EXPECT_EQ(s.due_of("r" + std::to_string(i)), base + i * 1000) << "r" << i;
  EXPECT_TRUE(s.due_of("later"));
  EXPECT_EQ(s.act("run-now", {{"prefix", "now:"}})["promoted"], 0) << "forwarded tasks are not pending";
  EXPECT_EQ(relay->terminate(), 0);
}

TEST_F(ApiBulkTest, OpenApiDescribesTheBulkRoutes) {
  const json doc = body_of(s_.call("GET", "/v1/openapi.json", ""));
  for (const char* path : {"/v1/tasks/batch", "/v1/tasks/cancel", "/v1/tasks/run-now"}) {
    ASSERT_TRUE(doc["paths"].contains(path)) << path;
    EXPECT_TRUE(doc["paths"][path].contains("post")) << path;
  }
}

}  // namespace
}  // namespace expiry::test
