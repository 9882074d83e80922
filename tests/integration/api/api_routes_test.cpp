// expiry-api against a private redis-server: every route with each scope, the errors as
// problem+json (400, 401, 403, 404, 405, 413, 415, 503), a PUT task in the schedule ZSET and,
// with a relay running, in the stream; tokens file errors (exit 2) and SIGTERM (exit 0).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "functions/key_layout.h"
#include "integration/api/api_harness.h"
#include "support/redis_client.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;
constexpr long long kFar = 4102444800000;  // 2100-01-01
constexpr const char* kTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

std::string put_body(long long delay_ms, const std::string& payload) {
  return json{{"delay_ms", delay_ms}, {"payload", payload}}.dump();
}

// The answer is a problem of `status`: its content type, and a body whose status matches.
void expect_problem(const HttpAnswer& r, long status, const std::string& what) {
  EXPECT_EQ(r.status, status) << what << ": " << r.body << r.error;
  EXPECT_EQ(r.header("content-type"), "application/problem+json") << what;
  const json j = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << what << ": " << r.body;
  EXPECT_EQ(j.value("status", 0), status) << what;
  EXPECT_EQ(j.value("type", ""), "about:blank") << what;
  EXPECT_FALSE(j.value("title", "").empty()) << what;
  EXPECT_FALSE(j.value("detail", "").empty()) << what;
}

class ApiRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<TestConnection>(server_.host(), server_.port());
    api_ = std::make_unique<ApiProcess>(server_);
  }

  HttpAnswer call(const std::string& method, const std::string& path, const std::string& token,
                  std::optional<std::string> body = std::nullopt) {
    ApiCall c;
    c.method = method;
    c.path = path;
    c.token = token;
    c.body = std::move(body);
    return api_->call(c);
  }
  HttpAnswer put(const std::string& id, const std::string& body, const std::string& token = kWriteToken) {
    return call("PUT", "/v1/tasks/" + id, token, body);
  }
  std::optional<std::string> score_of(const std::string& id) {
    const Reply r = redis_->command({"ZSCORE", KeyLayout("expiry").schedule_key(), id});
    if (r.type != Reply::Type::String) return std::nullopt;
    return r.str;
  }

  RedisServer server_;
  std::unique_ptr<TestConnection> redis_;
  std::unique_ptr<ApiProcess> api_;
};

TEST_F(ApiRoutesTest, PutWritesTheScheduleAndGetShowsTheTask) {
  HttpAnswer r = call("PUT", "/v1/tasks/order%2F42", kWriteToken,
                      json{{"at_ms", kFar}, {"payload", "hello"}, {"max_late_ms", 5000}}.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  json j = json::parse(r.body);
  EXPECT_EQ(j["id"], "order/42");
  EXPECT_EQ(j["due_ms"], kFar);
  EXPECT_EQ(j["replaced"], false);
  EXPECT_EQ(score_of("order/42"), std::to_string(kFar));

  r = call("GET", "/v1/tasks/order%2F42", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  j = json::parse(r.body);
  EXPECT_EQ(j["id"], "order/42");
  EXPECT_EQ(j["pending"], true);
  EXPECT_EQ(j["due_ms"], kFar);
  EXPECT_EQ(j["payload"], "hello");
  EXPECT_EQ(j["max_late_ms"], 5000);
  EXPECT_EQ(j["default_stream"], true);
  EXPECT_TRUE(j["created_ms"].is_number_integer());

  // Again: replaced (200); the traceparent header is the task's when the body has none.
  ApiCall again{"PUT", "/v1/tasks/order%2F42", kWriteToken, json{{"at_ms", kFar - 1}, {"payload_b64", "AP8="}}.dump()};
  again.extra_headers = {std::string("traceparent: ") + kTrace};
  r = api_->call(again);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["replaced"], true);
  r = call("GET", "/v1/tasks/order%2F42", kReadToken);
  j = json::parse(r.body);
  EXPECT_EQ(j["traceparent"], kTrace);
  EXPECT_TRUE(j["payload"].is_null());
  EXPECT_EQ(j["payload_b64"], "AP8=");

  // if_absent keeps the pending task.
  r = put("order%2F42", json{{"delay_ms", 1}, {"if_absent", true}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["kept"], true);
  EXPECT_EQ(score_of("order/42"), std::to_string(kFar - 1));
}

TEST_F(ApiRoutesTest, DeleteAndRunNow) {
  ASSERT_EQ(put("t1", put_body(3600000, "x")).status, 201);
  HttpAnswer r = call("POST", "/v1/tasks/t1/run-now", kWriteToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["was_due"], false);
  EXPECT_LT(j["due_ms"].get<long long>(), j["previous_due_ms"].get<long long>());

  r = call("DELETE", "/v1/tasks/t1", kWriteToken);
  EXPECT_EQ(r.status, 204) << r.body;
  EXPECT_TRUE(r.body.empty());
  EXPECT_FALSE(score_of("t1"));
  expect_problem(call("DELETE", "/v1/tasks/t1", kWriteToken), 404, "DELETE of a cancelled task");
  expect_problem(call("GET", "/v1/tasks/t1", kReadToken), 404, "GET of a cancelled task");
  expect_problem(call("POST", "/v1/tasks/t1/run-now", kWriteToken), 404, "run-now of a cancelled task");
}

TEST_F(ApiRoutesTest, ListPagesWithCursorPrefixAndDueBefore) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(put("a" + std::to_string(i), json{{"at_ms", kFar + i}}.dump()).status, 201);
    ASSERT_EQ(put("b" + std::to_string(i), json{{"at_ms", kFar + 10 + i}}.dump()).status, 201);
  }
  std::vector<std::string> ids;
  std::string cursor;
  for (int page = 0; page < 10; ++page) {
    const HttpAnswer r = call("GET", "/v1/tasks?limit=3" + (cursor.empty() ? "" : "&cursor=" + cursor), kReadToken);
    ASSERT_EQ(r.status, 200) << r.body;
    const json j = json::parse(r.body);
    EXPECT_LE(j["tasks"].size(), 3u);
    for (const auto& t : j["tasks"]) ids.push_back(t["id"]);
    if (j["next_cursor"].is_null()) break;
    cursor = j["next_cursor"];
    if (page % 2 == 1) {  // escaped or as given (base64: '+', '/' and '=' are taken literally)
      char* escaped = curl_easy_escape(nullptr, cursor.c_str(), static_cast<int>(cursor.size()));
      cursor = escaped;
      curl_free(escaped);
    }
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "b3", "b4"}));

  HttpAnswer r = call("GET", "/v1/tasks?prefix=b&limit=2", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][0]["id"], "b0");
  EXPECT_EQ(j["tasks"][1]["id"], "b1");
  EXPECT_FALSE(j["next_cursor"].is_null());

  r = call("GET", "/v1/tasks?due_before=" + std::to_string(kFar + 2), kReadToken);
  j = json::parse(r.body);
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_TRUE(j["next_cursor"].is_null());
  expect_problem(call("GET", "/v1/tasks?limit=1001", kReadToken), 400, "limit over the maximum");
  expect_problem(call("GET", "/v1/tasks?cursor=nope", kReadToken), 400, "a made-up cursor");
}

TEST_F(ApiRoutesTest, EveryRouteWithEachScope) {
  ASSERT_EQ(put("scoped", put_body(3600000, "x")).status, 201);
  struct Case {
    std::string method, path;
    std::optional<std::string> body;
    std::string needs;  // read, write or admin
    long ok;            // the status when allowed
  };
  const std::vector<Case> cases = {
      {"GET", "/v1/tasks/scoped", std::nullopt, "read", 200},
      {"GET", "/v1/tasks", std::nullopt, "read", 200},
      {"GET", "/v1/stats", std::nullopt, "read", 200},
      {"PUT", "/v1/tasks/scoped", put_body(3600000, "y"), "write", 200},
      {"POST", "/v1/tasks/scoped/run-now", std::nullopt, "write", 200},
      {"DELETE", "/v1/tasks/scoped", std::nullopt, "write", 204},
      {"POST", "/v1/pause", std::string(R"({"for_ms": 60000})"), "admin", 200},
      {"POST", "/v1/resume", std::nullopt, "admin", 200},
      {"GET", "/v1/dead", std::nullopt, "read", 200},
      {"POST", "/v1/dead/replay", std::string(R"({"entries": ["1-1"]})"), "admin", 200},
  };
  const std::vector<std::pair<std::string, std::string>> tokens = {
      {"read", kReadToken}, {"write", kWriteToken}, {"admin", kAdminToken}};
  const auto rank = [](const std::string& s) { return s == "read" ? 1 : s == "write" ? 2 : 3; };
  for (const auto& [scope, token] : tokens) {
    for (const Case& c : cases) {
      // A DELETE or run-now needs the task: schedule it again before each.
      const long again = put("scoped", put_body(3600000, "x")).status;
      ASSERT_TRUE(again == 200 || again == 201) << again;
      const HttpAnswer r = call(c.method, c.path, token, c.body);
      const std::string what = scope + " token: " + c.method + " " + c.path;
      if (rank(scope) >= rank(c.needs)) {
        EXPECT_EQ(r.status, c.ok) << what << ": " << r.body;
      } else {
        expect_problem(r, 403, what);
      }
    }
  }
  // The admin's pause took effect, and its resume ended it.
  EXPECT_EQ(integer(*redis_, {"EXISTS", "expiry:{0}:paused"}), 0);
  ASSERT_EQ(call("POST", "/v1/pause", kAdminToken).status, 200);
  EXPECT_EQ(integer(*redis_, {"EXISTS", "expiry:{0}:paused"}), 1);
  const json stats = json::parse(call("GET", "/v1/stats", kReadToken).body);
  EXPECT_EQ(stats["paused_buckets"], 1);
  EXPECT_EQ(stats["pending"], 1);
  const json resumed = json::parse(call("POST", "/v1/resume", kAdminToken).body);
  EXPECT_EQ(resumed["buckets_paused"], 1);
}

TEST_F(ApiRoutesTest, DeadLettersListAndReplay) {
  const auto add_dead = [&](const std::string& task, const std::string& at) {
    return redis_
        ->command({"XADD",
                   "expiry:stream:dead",
                   at,
                   "original_id",
                   "1-1",
                   "original_stream",
                   "expiry:stream",
                   "group",
                   "workers",
                   "reason",
                   "max deliveries",
                   "deliveries",
                   "3",
                   "dead_ms",
                   "1000",
                   "id",
                   task,
                   "via",
                   "sweep",
                   "due_ms",
                   "900",
                   "fired_ms",
                   "950",
                   "payload",
                   "p"})
        .str;
  };
  const std::string first = add_dead("job-1", "1700000000000-0");
  const std::string second = add_dead("job 2", "1700000000001-0");
  HttpAnswer r = call("GET", "/v1/dead?limit=1", kReadToken);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  ASSERT_EQ(j["entries"].size(), 1u);
  EXPECT_EQ(j["entries"][0]["entry"], first);
  EXPECT_EQ(j["entries"][0]["task_id"], "job-1");
  EXPECT_EQ(j["entries"][0]["reason"], "max deliveries");
  EXPECT_EQ(j["entries"][0]["deliveries"], 3);
  EXPECT_EQ(j["more"], true);

  expect_problem(call("POST", "/v1/dead/replay", kWriteToken, json{{"entries", {second}}}.dump()), 403, "write token");
  expect_problem(call("POST", "/v1/dead/replay", kAdminToken, json{{"entries", {"not-an-entry"}}}.dump()), 400,
                 "a malformed entry");
  r = call("POST", "/v1/dead/replay", kAdminToken, json{{"entries", {second}}, {"delay_ms", 600000}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  j = json::parse(r.body);
  ASSERT_EQ(j["replayed"].size(), 1u);
  EXPECT_EQ(j["replayed"][0]["task_id"], "job 2");
  EXPECT_TRUE(j["gone"].empty());
  EXPECT_TRUE(score_of("job 2"));
  EXPECT_EQ(integer(*redis_, {"XLEN", "expiry:stream:dead"}), 1);
  r = call("POST", "/v1/dead/replay", kAdminToken, json{{"entries", {second}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["gone"], json::array({second}));
}

TEST_F(ApiRoutesTest, UnauthenticatedIs401WithWwwAuthenticate) {
  for (const std::string& token : {std::string(), std::string("not-a-known-token-at-all")}) {
    const HttpAnswer r = call("GET", "/v1/tasks/x", token);
    expect_problem(r, 401, "token '" + token + "'");
    EXPECT_EQ(r.header("www-authenticate"), "Bearer realm=\"expiry-api\"");
  }
  ApiCall basic{"GET", "/v1/stats"};
  basic.extra_headers = {"Authorization: Basic " + kReadToken};
  const HttpAnswer refused = api_->call(basic);
  expect_problem(refused, 401, "Basic scheme");
  EXPECT_NE(refused.body.find("not of the Bearer scheme"), std::string::npos)
      << "a Basic header is not an unknown bearer token: " << refused.body;
  EXPECT_NE(call("GET", "/v1/stats", "not-a-known-token-at-all").body.find("the bearer token is not known"),
            std::string::npos);
}

// HEAD wherever there is a GET: the headers of a GET, no body.
TEST_F(ApiRoutesTest, HeadAnswersLikeGetWithoutABody) {
  for (const char* path : {"/healthz", "/readyz"}) {
    const HttpAnswer r = call("HEAD", path, "");
    EXPECT_EQ(r.status, 200) << path << ": " << r.body << r.error;
    EXPECT_TRUE(r.body.empty()) << path << ": " << r.body;
  }
  EXPECT_EQ(call("HEAD", "/v1/stats", "").status, 401) << "the scope of the GET applies";
  EXPECT_EQ(call("HEAD", "/v1/stats", kReadToken).status, 200);
}

TEST_F(ApiRoutesTest, ErrorsAreProblems) {
  expect_problem(call("GET", "/v2/nothing", kReadToken), 404, "unknown path");
  expect_problem(call("GET", "/v1/tasks/absent", kReadToken), 404, "absent task");
  HttpAnswer r = call("PATCH", "/v1/tasks/x", kWriteToken);
  expect_problem(r, 405, "PATCH");
  EXPECT_EQ(r.header("allow"), "GET, HEAD, PUT, DELETE");
  expect_problem(call("GET", "/v1/pause", kAdminToken), 405, "GET /v1/pause");
  expect_problem(put("x", "{\"delay_ms\": "), 400, "bad JSON");
  expect_problem(put("x", R"({"delay_ms": 1, "colour": "red"})"), 400, "unknown field");
  expect_problem(put("x", R"({"payload": "no time"})"), 400, "no delay_ms or at_ms");
  expect_problem(put("x", R"({"delay_ms": 1, "stream": "expiry:{0}:mine"})"), 400, "a stream in the task key space");
  expect_problem(put("bad%0Aid", put_body(1, "x")), 400, "control character in the id");
  expect_problem(put("bad%ZZ", put_body(1, "x")), 400, "malformed escape in the id");
  expect_problem(call("PUT", "/v1/tasks/x", kWriteToken), 400, "no body");

  ApiCall text{"PUT", "/v1/tasks/x", kWriteToken, put_body(1, "x")};
  text.content_type = "text/plain";
  expect_problem(api_->call(text), 415, "text/plain body");
  ApiCall charset{"PUT", "/v1/tasks/x", kWriteToken, put_body(3600000, "x")};
  charset.content_type = "application/json; charset=utf-8";
  EXPECT_EQ(api_->call(charset).status, 201);

  const std::string big = put_body(1, std::string((1 << 20) + 1, 'x'));
  expect_problem(put("x", big), 413, "a body over 1 MiB");
  // Nothing was written by the refused calls.
  EXPECT_FALSE(score_of("bad\nid"));
  EXPECT_EQ(integer(*redis_, {"ZCARD", KeyLayout("expiry").schedule_key()}), 1);
}

TEST_F(ApiRoutesTest, PublicEndpoints) {
  ASSERT_EQ(put("m", put_body(3600000, "x")).status, 201);
  HttpAnswer r = call("GET", "/healthz", "");
  EXPECT_EQ(r.status, 200);
  r = call("GET", "/readyz", "");
  EXPECT_EQ(r.status, 200) << r.body;
  r = call("GET", "/metrics", "");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("expiry_api_requests_total{route=\"/v1/tasks/{id}\",method=\"PUT\",status=\"201\"} 1"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("expiry_api_request_duration_seconds_count{route=\"/v1/tasks/{id}\"}"), std::string::npos);
  EXPECT_NE(r.body.find("expiry_api_open_connections "), std::string::npos);
  r = call("GET", "/v1/openapi.json", "");
  ASSERT_EQ(r.status, 200);
  const json doc = json::parse(r.body);
  EXPECT_EQ(doc["openapi"], "3.1.0");
  for (const char* path : {"/v1/tasks/{id}", "/v1/tasks/{id}/run-now", "/v1/tasks", "/v1/stats", "/v1/pause",
                           "/v1/resume", "/v1/dead", "/v1/dead/replay", "/healthz", "/readyz", "/metrics"}) {
    EXPECT_TRUE(doc["paths"].contains(path)) << path;
  }
}

TEST_F(ApiRoutesTest, RedisDownIs503ThenRecovers) {
  server_.stop();
  expect_problem(call("GET", "/readyz", ""), 503, "readyz without Redis");
  expect_problem(put("x", put_body(1, "x")), 503, "PUT without Redis");
  EXPECT_EQ(call("GET", "/healthz", "").status, 200);
  server_.start();
  EXPECT_TRUE(wait_until([&] { return put("x", put_body(3600000, "x")).status == 201; }, std::chrono::seconds(20),
                         std::chrono::milliseconds(50)));
  EXPECT_TRUE(wait_until([&] { return call("GET", "/readyz", "").status == 200; }, std::chrono::seconds(20),
                         std::chrono::milliseconds(50)));
}

TEST_F(ApiRoutesTest, RelayForwardsAPutTaskToTheStream) {
  auto relay = start_relay(server_, "api-relay");
  wait_relay_ready(*redis_, "api-relay", *relay);
  ASSERT_EQ(put("fire%20me", put_body(50, "payload-1")).status, 201);
  ASSERT_TRUE(wait_until([&] { return xlen(*redis_) >= 1; }, std::chrono::seconds(20)))
      << "the relay did not forward the task: " << relay->output();
  const auto entries = xrange_all(*redis_, KeyLayout("expiry").default_stream());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("id"), "fire me");
  EXPECT_EQ(entries[0].at("payload"), "payload-1");
  expect_problem(call("GET", "/v1/tasks/fire%20me", kReadToken), 404, "a forwarded task");
  EXPECT_EQ(relay->terminate(), 0);
}

// SIGTERM: new connections are refused, a request in flight (its head half sent) is still
// answered, with Connection: close, and the process exits 0.
TEST_F(ApiRoutesTest, SigtermFinishesTheRequestInFlightAndExitsZero) {
  ASSERT_EQ(put("kept", put_body(3600000, "x")).status, 201);
  const int fd = connect_loopback(api_->port());
  ASSERT_GE(fd, 0);
  const std::string head =
      "GET /v1/tasks/kept HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + kReadToken + "\r\n";
  ASSERT_EQ(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), static_cast<ssize_t>(head.size()));
  // Accepted (a connection still in the listen queue at the signal is refused, by design).
  ASSERT_TRUE(wait_until([&] { return open_connections(api_->port()) >= 2; }, std::chrono::seconds(20)));
  ASSERT_TRUE(api_->child().send_signal(SIGTERM));
  EXPECT_TRUE(wait_until(
      [&] {
        const int probe = connect_loopback(api_->port());
        if (probe >= 0) ::close(probe);
        return probe < 0;
      },
      std::chrono::seconds(20)))
      << "still accepting after SIGTERM";
  ASSERT_EQ(::send(fd, "\r\n", 2, MSG_NOSIGNAL), 2);
  bool closed = false;
  const std::string answer = read_until_closed(fd, std::chrono::seconds(20), &closed);
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  EXPECT_NE(answer.find("\"id\":\"kept\""), std::string::npos) << answer;
  const auto rc = api_->child().wait_exit(std::chrono::seconds(20));
  ASSERT_TRUE(rc) << api_->child().output();
  EXPECT_EQ(*rc, 0) << api_->child().output();
}

// The tokens file's errors, and a missing one, are configuration errors: exit 2, naming the line.
TEST(ApiConfigTest, TokensFileErrorsExit2) {
  RedisServer server;
  ScratchDir dir("expiry_api_tokens");
  struct Case {
    std::string content, message;
  };
  const std::vector<Case> cases = {
      {"read " + kReadToken + "\nsuper " + kWriteToken + "\n", "line 2: unknown scope"},
      {"# only a comment\n\nwrite\n", "line 3: expected `SCOPE TOKEN [name=NAME]"},
      {"write " + kWriteToken + " name=a name=b\n", "line 1: name= given twice"},
      {"write " + kWriteToken + " owner=me\n", "line 1: unknown option 'owner'"},
      {"admin short\n", "line 1: token shorter than 16 characters"},
      {"\n# nothing\n", "no tokens"},
  };
  for (const Case& c : cases) {
    const std::string file = dir.write("tokens", c.content);
    ChildProcess api(EXPIRY_API_BIN, {"--listen", "127.0.0.1:0", "--tokens-file", file, "--redis-url", server.url()});
    const auto rc = api.wait_exit(std::chrono::seconds(30));
    ASSERT_TRUE(rc) << c.content;
    EXPECT_EQ(*rc, 2) << api.output();
    EXPECT_NE(api.output().find(c.message), std::string::npos) << api.output();
  }
  ChildProcess missing(EXPIRY_API_BIN, {"--listen", "127.0.0.1:0", "--redis-url", server.url()});
  const auto rc = missing.wait_exit(std::chrono::seconds(30));
  ASSERT_TRUE(rc);
  EXPECT_EQ(*rc, 2);
  EXPECT_NE(missing.output().find("--tokens-file is required"), std::string::npos) << missing.output();
}

// A Redis that refuses the password ends the start with exit 2, as for the other programs: no
// request could succeed, and an API answering 503 forever hides the mistake.
TEST(ApiConfigTest, AWrongRedisPasswordExits2) {
  RedisServer::Options options;
  options.extra_config_lines = {"requirepass right-password"};
  RedisServer server(options);
  ScratchDir dir("expiry_api_password");
  const std::string tokens = dir.write("tokens", "write " + kWriteToken + "\n");
  const std::string url = "redis://:wrong-password@" + server.host() + ":" + std::to_string(server.port()) + "/0";
  ChildProcess api(EXPIRY_API_BIN, {"--listen", "127.0.0.1:0", "--tokens-file", tokens, "--redis-url", url});
  const auto rc = api.wait_exit(std::chrono::seconds(60));
  ASSERT_TRUE(rc) << "still serving with a refused password:\n" << api.output();
  EXPECT_EQ(*rc, 2) << api.output();
  EXPECT_NE(api.output().find("authentication failed"), std::string::npos) << api.output();
  EXPECT_EQ(api.output().find("wrong-password"), std::string::npos) << "the password is logged:\n" << api.output();
}

// No password for a Redis that wants one: exit 2 with a message that says Redis refused and where
// the password goes, without the name of the command that met the refusal (issue 43).
TEST(ApiConfigTest, AMissingRedisPasswordExits2SayingWhereItGoes) {
  RedisServer::Options options;
  options.extra_config_lines = {"requirepass right-password"};
  RedisServer server(options);
  ScratchDir dir("expiry_api_no_password");
  const std::string tokens = dir.write("tokens", "write " + kWriteToken + "\n");
  ChildProcess api(EXPIRY_API_BIN, {"--listen", "127.0.0.1:0", "--tokens-file", tokens, "--redis-url", server.url()});
  const auto rc = api.wait_exit(std::chrono::seconds(60));
  ASSERT_TRUE(rc) << "still serving without a password:\n" << api.output();
  EXPECT_EQ(*rc, 2) << api.output();
  const std::string out = api.output();
  EXPECT_NE(out.find("Redis at " + server.url() + " refused to run commands without a password: NOAUTH"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("redis://:PASSWORD@host:port"), std::string::npos) << out;
  EXPECT_EQ(out.find("INFO cluster"), std::string::npos) << "an internal command name:\n" << out;
}

// While Redis loads its data set after a restart, every route that needs Redis answers 503 with
// Retry-After, names no internal key, and the log holds a line per 10 s, not one per request
// (issue 43). Loading is slowed to seconds with the server's own key-load-delay (1 ms a key) and
// events served every KiB of the load, so requests meet LOADING replies; the test's requests run
// while RedisServer::start waits for the load to end.
TEST(ApiLoadingTest, WhileRedisLoadsItAnswers503WithRetryAfterAndNoKeyName) {
  RedisServer::Options options;
  options.extra_config_lines = {"appendonly no", "save \"\"", "key-load-delay 1000",
                                "loading-process-events-interval-bytes 1024"};
  RedisServer server(options);
  {
    TestConnection redis(server.host(), server.port());
    for (int batch = 0; batch < 30; ++batch) {
      std::vector<std::vector<std::string>> sets;
      for (int i = 0; i < 100; ++i) sets.push_back({"SET", "filler:" + std::to_string(batch * 100 + i), "v"});
      pipeline(redis, sets);
    }
  }
  ApiProcess api(server);
  ASSERT_EQ(api.call({"PUT", "/v1/tasks/before", kWriteToken, "{\"delay_ms\": 3600000}"}).status, 201);
  {
    TestConnection redis(server.host(), server.port());
    ASSERT_EQ(redis.command({"SAVE"}).str, "OK");  // the task and the filler, loaded at the restart
  }
  server.stop();
  std::thread restart([&] { server.start(); });  // returns once the 3,000 keys are loaded
  long answered_503 = 0;
  long other = 0;
  std::string last_503;
  std::string last_other;
  const bool loaded = wait_until(
      [&] {
        const HttpAnswer r = api.call({"GET", "/v1/tasks/before", kReadToken});
        if (r.status == 503 && !r.header("retry-after").empty()) {
          ++answered_503;
          last_503 = r.body;
        } else if (r.status != 503) {
          ++other;
          if (r.status != 200) last_other = std::to_string(r.status) + " " + r.body;
        }
        return r.status == 200;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(5));
  restart.join();
  ASSERT_TRUE(loaded) << "no 200 after the load";
  EXPECT_GT(answered_503, 0) << "no request met the load (it took too little time?)";
  EXPECT_EQ(other, 1) << "only the final 200 may be other than 503; last: " << last_other;
  EXPECT_NE(last_503.find("loading"), std::string::npos) << last_503;
  EXPECT_EQ(last_503.find("expiry:"), std::string::npos) << "a key name in the answer: " << last_503;
  size_t lines = 0;
  const std::string log = api.child().output();
  for (size_t at = log.find("Redis is not ready"); at != std::string::npos; at = log.find("Redis is not ready", at + 1)) {
    ++lines;
  }
  EXPECT_LE(lines, 2u) << answered_503 << " answers logged " << lines << " lines:\n" << log;
  std::printf("%ld requests answered 503 while Redis loaded; %zu log lines\n", answered_503, lines);
}

}  // namespace
}  // namespace expiry::test
