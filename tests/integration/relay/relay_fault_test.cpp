// The relay under faults and bad input: downtime, killed subscriptions, FUNCTION FLUSH,
// missing notifications, bad config and credentials.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "integration/relay/relay_harness.h"

namespace expiry::test {
namespace {

class RelayFaultTest : public ::testing::Test {
 protected:
  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

std::vector<Task> numbered(const std::string& prefix, int n, long long base_delay, long long spread) {
  std::vector<Task> tasks;
  for (int i = 0; i < n; ++i) {
    tasks.push_back({prefix + std::to_string(i), base_delay + (spread ? (i * 13) % spread : 0), "p" + std::to_string(i)});
  }
  return tasks;
}

std::map<std::string, std::string> payloads(const std::vector<Task>& tasks) {
  std::map<std::string, std::string> m;
  for (auto& t : tasks) m[t.id] = t.payload;
  return m;
}

TEST_F(RelayFaultTest, TasksDueWhileStoppedAreForwardedWithinOneSecondOfRestart) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  EXPECT_EQ(relay->terminate(), 0) << "SIGTERM must exit 0";

  auto tasks = numbered("down-", 1000, 50, 400);
  auto due = schedule_all(redis_, tasks);
  long long last_due = 0;
  for (auto& [id, d] : due) last_due = std::max(last_due, d);
  // Let every trigger expire with nobody listening: those events are lost for good.
  ASSERT_TRUE(wait_until([&] { return redis_now_ms(redis_) > last_due + 300; }, 5s));
  ASSERT_EQ(xlen(redis_), 0);

  const auto restarted_at = std::chrono::steady_clock::now();
  relay = start_relay(server_, "r1");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) >= 1000; }, 1000ms))
      << "only " << xlen(redis_) << " of 1000 forwarded within 1 s of restart\n"
      << relay->output();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - restarted_at);
  RecordProperty("restart_to_all_forwarded_ms", static_cast<int>(took.count()));
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

TEST_F(RelayFaultTest, ResubscribesAfterClientKillPubsubAndLosesNothing) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  auto tasks = numbered("k-", 2000, 100, 2500);
  schedule_all(redis_, tasks);
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(wait_until([&] { return relay_ready(redis_, "r1"); }, 5s));
    const auto killed = integer(redis_, {"CLIENT", "KILL", "TYPE", "pubsub"});
    EXPECT_GE(killed, 1);
    // Wait until the kill has been noticed, then for the resubscription.
    ASSERT_TRUE(wait_until([&] { return relay_ready(redis_, "r1"); }, 5s)) << relay->output();
  }
  auto numpat = integer(redis_, {"PUBSUB", "NUMPAT"});
  EXPECT_EQ(numpat, 1);
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= 2000; }, 10s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

TEST_F(RelayFaultTest, ReconnectsAfterCommandConnectionIsKilled) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  auto tasks = numbered("c-", 500, 100, 1500);
  schedule_all(redis_, tasks);
  for (int round = 0; round < 3; ++round) {
    redis_.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
    ASSERT_TRUE(wait_until(
        [&] {
          auto list = redis_.command({"CLIENT", "LIST"});
          return list.str.find("expiry-relay-cmd-r1") != std::string::npos;
        },
        5s))
        << relay->output();
  }
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= 500; }, 10s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

// The group destroyed while the relay runs, then the relay reconnects: the group is created
// again at $ (not 0), so consumers do not handle the whole stream again; logged and counted.
TEST_F(RelayFaultTest, DestroyedGroupIsRecreatedAtTheEndOnReconnect) {
  const int port = free_port();
  auto relay = start_relay(server_, "r1", {"--metrics-port", std::to_string(port)});
  wait_relay_ready(redis_, "r1", *relay);
  auto tasks = numbered("g-", 20, 0, 0);
  schedule_all(redis_, tasks);
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) == 20; }, 10s)) << relay->output();
  const auto entries = xrange_all(redis_, "expiry:stream");
  const std::string last_id = entries.back().at("_entry_id");

  ASSERT_EQ(integer(redis_, {"XGROUP", "DESTROY", "expiry:stream", "workers"}), 1);
  redis_.command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  auto last_delivered = [&]() -> std::string {
    auto g = redis_.command({"XINFO", "GROUPS", "expiry:stream"});
    if (g.failed() || g.elements.size() != 1) return "";
    const auto& kv = g.elements[0].elements;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (kv[i].str == "last-delivered-id") return kv[i + 1].str;
    }
    return "";
  };
  ASSERT_TRUE(wait_until([&] { return !last_delivered().empty(); }, 10s)) << relay->output();
  EXPECT_EQ(last_delivered(), last_id);
  ASSERT_TRUE(wait_until(
      [&] { return metric_value(http_get(port, "/metrics").body, "expiry_relay_group_recreated_total") == 1; }, 10s))
      << http_get(port, "/metrics").body;
  EXPECT_NE(relay->output().find("consumer group workers on expiry:stream was missing (destroyed); created it again "
                                 "at $"),
            std::string::npos)
      << relay->output();
  // Still forwarding.
  schedule_all(redis_, {{"after", 0, "p"}});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 21; }, 10s)) << relay->output();
}

TEST_F(RelayFaultTest, ReloadsTheLibraryAfterFunctionFlush) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  auto tasks = numbered("f-", 100, 300, 300);
  schedule_all(redis_, tasks);
  redis_.command({"FUNCTION", "FLUSH"});
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= 100; }, 10s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

TEST_F(RelayFaultTest, SurvivesARedisRestartWithAof) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"appendonly yes", "appendfsync always"};
  RedisServer aof_server(opts);
  TestConnection redis(aof_server.host(), aof_server.port());
  auto relay = start_relay(aof_server, "r1");
  wait_relay_ready(redis, "r1", *relay);
  auto tasks = numbered("aof-", 300, 1500, 1000);
  schedule_all(redis, tasks);
  aof_server.stop();
  aof_server.start();
  TestConnection again(aof_server.host(), aof_server.port());
  ASSERT_TRUE(wait_until([&] { return zcard(again) == 0 && xlen(again) >= 300; }, 15s)) << relay->output();
  expect_exactly_once(xrange_all(again, "expiry:stream"), payloads(tasks));
}

TEST(RelayNotifications, WithoutKeyspaceEventsItWarnsAndForwardsBySweep) {
  RedisServer::Options opts;
  opts.notify_expired = false;
  RedisServer server(opts);
  TestConnection redis(server.host(), server.port());
  auto relay = start_relay(server, "r1");
  ASSERT_TRUE(wait_until([&] { return relay_ready(redis, "r1"); }, 10s)) << relay->output();
  auto tasks = numbered("s-", 50, 100, 200);
  auto due = schedule_all(redis, tasks);
  ASSERT_TRUE(wait_until([&] { return xlen(redis) >= 50; }, 5s)) << relay->output();
  for (auto& e : xrange_all(redis, "expiry:stream")) {
    EXPECT_EQ(e["via"], "sweep");
    EXPECT_LE(std::stoll(e["fired_ms"]) - due[e["id"]], 500);
  }
  EXPECT_NE(relay->output().find("notify-keyspace-events"), std::string::npos);
}

TEST(RelayNotifications, RequireNotificationsMakesItFatal) {
  RedisServer::Options opts;
  opts.notify_expired = false;
  RedisServer server(opts);
  auto relay = start_relay(server, "r1", {"--require-notifications"});
  auto code = relay->wait_exit(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2);
  EXPECT_NE(relay->output().find("notify-keyspace-events"), std::string::npos) << relay->output();
}

TEST(RelayNotifications, RefusedConfigCommandIsReportedNotFatal) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"rename-command CONFIG \"\""};
  RedisServer server(opts);
  TestConnection redis(server.host(), server.port());
  auto relay = start_relay(server, "r1");
  ASSERT_TRUE(wait_until([&] { return relay_ready(redis, "r1"); }, 10s)) << relay->output();
  schedule_all(redis, {{"z", 100, "zz"}});
  ASSERT_TRUE(wait_until([&] { return xlen(redis) == 1; }, 5s)) << relay->output();
  EXPECT_NE(relay->output().find("cannot read notify-keyspace-events"), std::string::npos) << relay->output();
}

struct BadStart {
  std::vector<std::string> args;
  std::string expected_message;
};

TEST(RelayBadInput, BadSettingsExitTwoWithAClearMessage) {
  const std::string dir = ::testing::TempDir();
  const std::string bad_json = dir + "/bad.json";
  std::ofstream(bad_json) << "{ \"namespace\": ";
  const std::string unknown_key = dir + "/unknown.json";
  std::ofstream(unknown_key) << R"({"sweep_interval": 10})";
  const std::string wrong_type = dir + "/type.json";
  std::ofstream(wrong_type) << R"({"sweep_interval_ms": "fast"})";
  const std::vector<BadStart> cases = {
      {{"--redis-url", "http://127.0.0.1:6379"}, "scheme must be redis:// or rediss://"},
      {{"--redis-url", "redis://127.0.0.1:99999"}, "port out of range"},
      {{"--redis-url", "redis://127.0.0.1:6379", "--tls-insecure"}, "not rediss://"},
      {{"--redis-url", "rediss://127.0.0.1:6379", "--tls-cert-file", dir + "/missing.pem"}, "tls_cert_file and tls_key_file"},
      {{"--redis-url", "rediss://127.0.0.1:6379", "--tls-ca-cert-file", dir + "/missing.pem"}, "cannot read tls_ca_cert_file"},
      {{"--sweep-interval-ms", "0"}, "sweep_interval_ms must be between"},
      {{"--sweep-interval-ms", "-5"}, "sweep_interval_ms must be between"},
      {{"--namespace", "bad space"}, "namespace may contain only"},
      {{"--config", bad_json}, "not valid JSON"},
      {{"--config", unknown_key}, "unknown key 'sweep_interval'"},
      {{"--config", wrong_type}, "must be an integer"},
      {{"--config", dir + "/missing.json"}, "cannot read config file"},
      {{"--password-file", dir + "/missing.pw"}, "cannot read password file"},
  };
  for (const auto& c : cases) {
    ChildProcess p(EXPIRY_RELAY_BIN, c.args);
    auto code = p.wait_exit(5s);
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(*code, 2) << c.args.back();
    EXPECT_NE(p.output().find(c.expected_message), std::string::npos)
        << "args: " << c.args.back() << "\noutput: " << p.output();
  }
}

// A config or password file that is a directory, or whose read fails, is a configuration error
// (exit 2 naming the file), never an uncaught exception (abort, exit 134), from flags or env.
TEST(RelayBadInput, ConfigOrPasswordFileThatCannotBeReadExitsTwo) {
  std::string dir = ::testing::TempDir() + "relay_bad_files_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<BadStart> cases = {
      {{"--config", dir}, "config file " + dir + " is a directory"},
      {{"--password-file", dir}, "password file " + dir + " is a directory"},
      {{"--config", "/proc/self/mem"}, "cannot read config file /proc/self/mem: Input/output error"},
      {{"--password-file", "/proc/self/mem"}, "cannot read password file /proc/self/mem: Input/output error"},
  };
  for (const auto& c : cases) {
    for (bool check_only : {false, true}) {
      auto args = c.args;
      if (check_only) args.push_back("--check-config");
      ChildProcess p(EXPIRY_RELAY_BIN, args);
      auto code = p.wait_exit(10s);
      ASSERT_TRUE(code.has_value()) << p.output();
      EXPECT_EQ(*code, 2) << c.args[0] << " " << c.args[1] << ": " << p.output();
      EXPECT_NE(p.output().find("expiry-relay: configuration error: " + c.expected_message), std::string::npos)
          << p.output();
    }
  }
  ChildProcess from_env(EXPIRY_RELAY_BIN, {}, {{"EXPIRY_RELAY_CONFIG", dir}});
  ASSERT_EQ(from_env.wait_exit(10s), std::optional<int>(2)) << from_env.output();
  EXPECT_NE(from_env.output().find("config file " + dir + " is a directory"), std::string::npos)
      << from_env.output();
  rmdir(dir.c_str());
}

TEST(RelayBadInput, CheckConfigValidatesWithoutConnecting) {
  ChildProcess ok(EXPIRY_RELAY_BIN, {"--check-config", "--redis-url", "redis://app:s3cret@10.255.255.1:6390/2"},
                  {{"EXPIRY_RELAY_NAMESPACE", "orders"}});
  ASSERT_EQ(ok.wait_exit(5s), std::optional<int>(0)) << ok.output();
  const auto out = ok.output();
  EXPECT_NE(out.find("configuration OK"), std::string::npos);
  EXPECT_NE(out.find("namespace=orders (env EXPIRY_RELAY_NAMESPACE)"), std::string::npos) << out;
  EXPECT_EQ(out.find("s3cret"), std::string::npos) << "password leaked: " << out;
}

TEST(RelayBadInput, WrongPasswordExitsTwoAndNeverLogsIt) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"requirepass correct-horse"};
  RedisServer server(opts);
  ChildProcess relay(EXPIRY_RELAY_BIN,
                     {"--redis-url", "redis://:battery-staple@127.0.0.1:" + std::to_string(server.port()) + "/0"});
  auto code = relay.wait_exit(10s);
  ASSERT_TRUE(code.has_value()) << relay.output();
  EXPECT_EQ(*code, 2);
  EXPECT_NE(relay.output().find("WRONGPASS"), std::string::npos) << relay.output();
  EXPECT_EQ(relay.output().find("battery-staple"), std::string::npos) << relay.output();
  EXPECT_EQ(relay.output().find("retrying in"), std::string::npos) << "no retry line before the exit:\n"
                                                                    << relay.output();
  EXPECT_EQ(relay.output().find("starting"), std::string::npos) << "it said it was starting before it exited:\n"
                                                                 << relay.output();
}

TEST(RelayBadInput, PasswordFromFileWorks) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"requirepass correct-horse"};
  RedisServer server(opts);
  const std::string pw = ::testing::TempDir() + "/relay.pw";
  std::ofstream(pw) << "correct-horse\n";
  auto relay = start_relay(server, "r1", {"--password-file", pw});
  TestConnection redis(server.host(), server.port());
  redis.command({"AUTH", "correct-horse"});
  ASSERT_TRUE(wait_until([&] { return relay_ready(redis, "r1"); }, 10s)) << relay->output();
  EXPECT_EQ(relay->output().find("correct-horse"), std::string::npos);
}

TEST(RelayBadInput, UnreachableRedisIsRetriedWithBackoffUntilItAppears) {
  // Nothing listens on this port yet: the relay logs and retries, then works once Redis is up.
  RedisServer server;
  const int port = server.port();
  server.stop();
  auto relay = std::make_unique<ChildProcess>(
      EXPIRY_RELAY_BIN,
      std::vector<std::string>{"--redis-url", "redis://127.0.0.1:" + std::to_string(port) + "/0", "--instance", "r1",
                               "--reconnect-initial-ms", "20", "--reconnect-max-ms", "100"});
  ASSERT_TRUE(wait_until([&] { return relay->output().find("retrying in") != std::string::npos; }, 5s));
  EXPECT_TRUE(relay->running());
  server.start();
  TestConnection redis(server.host(), server.port());
  ASSERT_TRUE(wait_until([&] { return relay_ready(redis, "r1"); }, 10s)) << relay->output();
}

TEST(RelayBadInput, HungServerHitsTheConnectTimeoutAndIsRetried) {
  // A loopback listener that never accepts: TCP connects (backlog), but nothing ever answers.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int port = ntohs(addr.sin_port);
  ChildProcess relay(EXPIRY_RELAY_BIN, {"--redis-url", "redis://127.0.0.1:" + std::to_string(port) + "/0",
                                        "--connect-timeout-ms", "200", "--reconnect-max-ms", "200"});
  EXPECT_TRUE(wait_until(
      [&] {
        const auto out = relay.output();
        const auto first = out.find("connect timeout after 200 ms");
        return first != std::string::npos && out.find("connect timeout after 200 ms", first + 1) != std::string::npos;
      },
      5s))
      << relay.output();
  EXPECT_TRUE(relay.running());
  EXPECT_EQ(relay.terminate(), 0);
  ::close(fd);
}

TEST_F(RelayFaultTest, JsonLogLinesAreValidJson) {
  auto relay = start_relay(server_, "r1", {"--log-format", "json"});
  wait_relay_ready(redis_, "r1", *relay);
  ASSERT_EQ(relay->terminate(), 0);
  std::istringstream lines(relay->output());
  std::string line;
  int parsed = 0;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line);  // throws (test fails) on a non-JSON line
    EXPECT_TRUE(j.contains("level") && j.contains("msg") && j.contains("ts_ms")) << line;
    ++parsed;
  }
  EXPECT_GE(parsed, 3);
}

}  // namespace
}  // namespace expiry::test
