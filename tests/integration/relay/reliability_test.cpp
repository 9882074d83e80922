// The hostile-environment rows of docs/reliability.md: Redis too old, wrong data at our keys,
// unusual ids, a full Redis, LOADING, a read-only replica, SIGTERM during a sweep. Each test
// asserts that nothing is lost or forwarded twice, and that the failure is reported clearly.
#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"

namespace expiry::test {
namespace {

std::vector<Task> numbered(const std::string& prefix, int n, long long delay) {
  std::vector<Task> tasks;
  for (int i = 0; i < n; ++i) tasks.push_back({prefix + std::to_string(i), delay, "p" + std::to_string(i)});
  return tasks;
}

std::map<std::string, std::string> payloads(const std::vector<Task>& tasks) {
  std::map<std::string, std::string> m;
  for (auto& t : tasks) m[t.id] = t.payload;
  return m;
}

TEST(Reliability, RedisWithoutFunctionsIsRejectedAtStart) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"rename-command FUNCTION \"\""};  // what a Redis 6 answers: unknown command
  RedisServer server(opts);
  auto relay = start_relay(server, "r1");
  auto code = relay->wait_exit(10s);
  ASSERT_TRUE(code.has_value()) << relay->output();
  EXPECT_EQ(*code, 2);
  EXPECT_NE(relay->output().find("Redis 7.0 or newer is required"), std::string::npos) << relay->output();
}

class ReliabilityTest : public ::testing::Test {
 protected:
  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(ReliabilityTest, WrongTypeAtTheScheduleKeyIsReportedAndNothingIsLost) {
  auto relay = start_relay(server_, "r1", {"--sweep-interval-ms", "100"});
  wait_relay_ready(redis_, "r1", *relay);
  redis_.command({"SET", "expiry:{0}:schedule", "not a zset"});
  // Producers get a clear error and nothing is written.
  redis_.command(load_library_argv());
  auto r = redis_.command(schedule_argv(KeyLayout("expiry"), "a", ScheduleMode::Delay, 100, "p"));
  EXPECT_TRUE(r.failed());
  EXPECT_NE(r.str.find("WRONGTYPE"), std::string::npos) << r.str;
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:a", "expiry:{0}:t:a"}), 0);
  ASSERT_TRUE(wait_until([&] { return relay->output().find("sweep failed") != std::string::npos; }, 5s))
      << relay->output();
  EXPECT_TRUE(relay->running());
  // Once the key is repaired the relay carries on.
  redis_.command({"DEL", "expiry:{0}:schedule"});
  auto tasks = numbered("after-", 20, 100);
  schedule_all(redis_, tasks);
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 20 && zcard(redis_) == 0; }, 5s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

TEST_F(ReliabilityTest, WrongTypeAtAShadowKeyIsForwardedWithAMarker) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  schedule_all(redis_, {{"shadowed", 200, "payload"}});
  redis_.command({"DEL", "expiry:{0}:task:shadowed"});
  redis_.command({"SET", "expiry:{0}:task:shadowed", "a string"});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 5s)) << relay->output();
  auto e = xrange_all(redis_, "expiry:stream")[0];
  EXPECT_EQ(e["id"], "shadowed");
  EXPECT_EQ(e["missing_payload"], "wrongtype");
}

TEST_F(ReliabilityTest, WrongTypeAtTheStreamKeyKeepsTasksPendingUntilRepaired) {
  auto relay = start_relay(server_, "r1", {"--sweep-interval-ms", "100"});
  wait_relay_ready(redis_, "r1", *relay);
  redis_.command({"DEL", "expiry:stream"});
  redis_.command({"SET", "expiry:stream", "not a stream"});
  auto tasks = numbered("s-", 50, 100);
  schedule_all(redis_, tasks);
  ASSERT_TRUE(wait_until([&] { return relay->output().find("holds a string, not a stream") != std::string::npos; }, 5s))
      << relay->output();
  EXPECT_EQ(zcard(redis_), 50) << "a failed claim must leave the task in the schedule";
  redis_.command({"DEL", "expiry:stream"});
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) == 50; }, 5s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
  EXPECT_EQ(redis_.command({"XINFO", "GROUPS", "expiry:stream"}).elements.size(), 1u) << "group recreated";
}

TEST_F(ReliabilityTest, PerTaskStreamOfTheWrongTypeFallsBackToTheDefaultStream) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  redis_.command({"SET", "orders:stream", "oops"});
  redis_.command(load_library_argv());
  redis_.command(schedule_argv(KeyLayout("expiry"), "x", ScheduleMode::Delay, 100, "p", "orders:stream"));
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 5s)) << relay->output();
  auto e = xrange_all(redis_, "expiry:stream")[0];
  EXPECT_EQ(e["undeliverable_stream"], "orders:stream");
  EXPECT_EQ(e["payload"], "p");
}

TEST_F(ReliabilityTest, OneSweepCallRoutesMixedStreamsEachTaskOnce) {
  // One expiry_sweep call checks each stream's type and permissions once and caches them; a
  // stream it creates, and one of the wrong type, must still be handled for every later task.
  redis_.command(load_library_argv());
  const KeyLayout keys("expiry");
  redis_.command({"SET", "bad:stream", "oops"});
  std::vector<std::vector<std::string>> cmds;
  for (int i = 0; i < 30; ++i) {
    const std::string id = "m" + std::to_string(i);
    const char* stream = i % 3 == 0 ? "" : i % 3 == 1 ? "new:stream" : "bad:stream";
    cmds.push_back(schedule_argv(keys, id, ScheduleMode::At, 1000 + i, "p" + std::to_string(i), stream));
  }
  pipeline(redis_, cmds);
  // One call takes all 30 unless its 2 ms budget runs out first (a busy machine): then the next
  // calls go on, each with its own cache.
  long long forwarded = 0;
  for (int call = 0; call < 30 && forwarded < 30; ++call) {
    auto r = redis_.command(sweep_argv(keys, "expiry:stream", 100, "sweep", "workers"));
    ASSERT_FALSE(r.failed()) << r.describe();
    ASSERT_FALSE(r.elements.empty()) << r.describe();
    forwarded += r.elements[0].integer;
  }
  EXPECT_EQ(forwarded, 30) << "forwarded";
  EXPECT_EQ(zcard(redis_), 0);
  auto fresh = xrange_all(redis_, "new:stream");
  auto fallback = xrange_all(redis_, "expiry:stream");
  ASSERT_EQ(fresh.size(), 10u);
  ASSERT_EQ(fallback.size(), 20u);
  for (auto& e : fresh) EXPECT_EQ(std::stoi(e["id"].substr(1)) % 3, 1) << e["id"];
  int redirected = 0;
  for (auto& e : fallback) {
    const int i = std::stoi(e["id"].substr(1));
    EXPECT_NE(i % 3, 1) << e["id"];
    EXPECT_EQ(e["payload"], "p" + std::to_string(i));
    if (i % 3 == 2) {
      EXPECT_EQ(e["undeliverable_stream"], "bad:stream");
      ++redirected;
    } else {
      EXPECT_EQ(e.count(entry_field::kUndeliverableStream), 0u);
    }
  }
  EXPECT_EQ(redirected, 10);
  EXPECT_EQ(redis_.command({"XINFO", "GROUPS", "new:stream"}).elements.size(), 1u) << "group created once";
  EXPECT_EQ(redis_.command({"GET", "bad:stream"}).str, "oops");
  for (int i = 0; i < 30; ++i) {
    const std::string id = "m" + std::to_string(i);
    EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:" + id, "expiry:{0}:t:" + id}), 0) << id;
  }
}

TEST_F(ReliabilityTest, IdsWithSpacesColonsBracesAndUnicodeArriveIntact) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  const std::vector<Task> tasks = {{"order 42", 100, "a"},
                                   {"tenant:7:order:42", 100, "b"},
                                   {"{weird}id", 100, "c"},
                                   {"заказ-42 ✓", 100, "d"},
                                   {std::string(256, 'x'), 100, "e"}};
  schedule_all(redis_, tasks);
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 5; }, 5s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

TEST_F(ReliabilityTest, InvalidIdsAndOversizedPayloadsAreRejectedByTheLibrary) {
  redis_.command(load_library_argv());
  const KeyLayout keys("expiry");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "empty task id"},
      {"line\nbreak", "control character"},
      {"tab\there", "control character"},
      {std::string("\xff\xfe", 2), "not valid UTF-8"},
      {std::string("\xc0\xaf", 2), "not valid UTF-8"},      // overlong '/'
      {std::string("\xed\xa0\x80", 3), "not valid UTF-8"},  // a surrogate
      {std::string(257, 'x'), "longer than 256 bytes"},
  };
  for (const auto& [id, message] : bad) {
    auto r = redis_.command(schedule_argv(keys, id, ScheduleMode::Delay, 100, "p"));
    EXPECT_TRUE(r.failed()) << id;
    EXPECT_NE(r.str.find(message), std::string::npos) << r.str;
  }
  auto big = redis_.command(schedule_argv(keys, "big", ScheduleMode::Delay, 100, std::string(65537, 'p')));
  EXPECT_TRUE(big.failed());
  EXPECT_NE(big.str.find("payload larger than 65536 bytes"), std::string::npos);
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:big", "expiry:{0}:t:big"}), 0);
}

TEST_F(ReliabilityTest, FullRedisRefusesSchedulesAndTheRelayRetriesWithoutLoss) {
  auto relay = start_relay(server_, "r1", {"--sweep-interval-ms", "100"});
  wait_relay_ready(redis_, "r1", *relay);
  auto tasks = numbered("mem-", 200, 300);
  schedule_all(redis_, tasks);
  // Memory limit just below what is used: every write is refused (noeviction).
  const auto info = redis_.command({"INFO", "memory"}).str;
  const auto pos = info.find("used_memory:");
  const long long used = std::stoll(info.substr(pos + 12));
  redis_.command({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  redis_.command({"CONFIG", "SET", "maxmemory", std::to_string(used / 2)});
  auto refused = redis_.command(schedule_argv(KeyLayout("expiry"), "late", ScheduleMode::Delay, 100, "p"));
  EXPECT_TRUE(refused.failed());
  EXPECT_NE(refused.str.find("OOM"), std::string::npos) << refused.str;
  ASSERT_TRUE(wait_until([&] { return relay->output().find("OOM") != std::string::npos; }, 5s)) << relay->output();
  EXPECT_EQ(zcard(redis_), 200) << "nothing may leave the schedule while the stream cannot be written";
  redis_.command({"CONFIG", "SET", "maxmemory", "0"});
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) == 200; }, 5s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

TEST(Reliability, LoadingAfterRestartIsWaitedOut) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"appendonly yes", "appendfsync always", "aof-use-rdb-preamble no",
                             "key-load-delay 50"};  // 50 µs per key: ~2 s of LOADING for 40k keys
  RedisServer server(opts);
  TestConnection redis(server.host(), server.port());
  std::vector<std::vector<std::string>> fill;
  for (int i = 0; i < 40000; ++i) fill.push_back({"SET", "filler:" + std::to_string(i), "x"});
  pipeline(redis, fill);
  auto relay = start_relay(server, "r1");
  wait_relay_ready(redis, "r1", *relay);
  auto tasks = numbered("load-", 100, 1000);
  schedule_all(redis, tasks);
  server.stop();
  server.start();  // returns once loading is over; the relay met LOADING meanwhile
  TestConnection again(server.host(), server.port());
  ASSERT_TRUE(wait_until([&] { return zcard(again) == 0 && xlen(again) == 100; }, 15s)) << relay->output();
  expect_exactly_once(xrange_all(again, "expiry:stream"), payloads(tasks));
  EXPECT_NE(relay->output().find("LOADING"), std::string::npos) << relay->output();
}

TEST(Reliability, ReadOnlyReplicaIsRetriedUntilPromoted) {
  RedisServer primary;
  RedisServer::Options replica_opts;
  replica_opts.extra_config_lines = {"replicaof 127.0.0.1 " + std::to_string(primary.port())};
  RedisServer replica(replica_opts);
  TestConnection p(primary.host(), primary.port());
  TestConnection r(replica.host(), replica.port());
  auto tasks = numbered("ro-", 50, 200);
  schedule_all(p, tasks);
  ASSERT_TRUE(wait_until([&] { return zcard(r) == 50; }, 10s)) << "replication";
  auto relay = start_relay(replica, "r1");
  ASSERT_TRUE(wait_until([&] { return relay->output().find("READONLY") != std::string::npos; }, 10s))
      << relay->output();
  EXPECT_TRUE(relay->running());
  EXPECT_EQ(zcard(r), 50);
  // Failover: the replica is promoted; the relay's retries now succeed.
  r.command({"REPLICAOF", "NO", "ONE"});
  ASSERT_TRUE(wait_until([&] { return zcard(r) == 0 && xlen(r) == 50; }, 10s)) << relay->output();
  expect_exactly_once(xrange_all(r, "expiry:stream"), payloads(tasks));
}

// Ready means "can forward", for the relay and the canceller alike: a node turned into a replica
// (REPLICAOF) makes /readyz 503 with the reason, and the ready gauge 0, within a probe period;
// promoted again, both come back and the tasks held meanwhile fire.
TEST(Reliability, ReadinessFollowsWhetherTheNodeTakesWrites) {
  RedisServer other;
  RedisServer node;
  TestConnection n(node.host(), node.port());
  const int relay_port = free_port();
  const int canceller_port = free_port();
  auto relay = start_relay(node, "r1", {"--metrics-port", std::to_string(relay_port)});
  ChildProcess canceller(ORDER_CANCELLER_BIN,
                         {"--redis-url", node.url(), "--consumer", "c1", "--block-ms", "200", "--metrics-port",
                          std::to_string(canceller_port), "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200"});
  const auto status = [](int port) { return http_get(port, "/readyz").status; };
  ASSERT_TRUE(wait_until([&] { return status(relay_port) == 200 && status(canceller_port) == 200; }, 30s))
      << relay->output() << canceller.output();

  ASSERT_EQ(n.command({"REPLICAOF", "127.0.0.1", std::to_string(other.port())}).str, "OK");
  ASSERT_TRUE(wait_until([&] { return status(relay_port) == 503 && status(canceller_port) == 503; }, 30s))
      << "still ready on a replica\n" << tail_lines(relay->output(), 20) << tail_lines(canceller.output(), 20);
  const std::string relay_why = http_get(relay_port, "/readyz").body;
  EXPECT_TRUE(relay_why.find("not master") != std::string::npos || relay_why.find("refuses writes") != std::string::npos)
      << relay_why;
  EXPECT_NE(http_get(canceller_port, "/readyz").body.find("refuses writes"), std::string::npos)
      << http_get(canceller_port, "/readyz").body;
  EXPECT_EQ(metric_value(http_get(relay_port, "/metrics").body, "expiry_relay_ready"), 0);

  ASSERT_EQ(n.command({"REPLICAOF", "NO", "ONE"}).str, "OK");
  auto tasks = numbered("after-", 10, 100);
  schedule_all(n, tasks);
  ASSERT_TRUE(wait_until([&] { return status(relay_port) == 200 && status(canceller_port) == 200; }, 30s))
      << http_get(relay_port, "/readyz").body << http_get(canceller_port, "/readyz").body;
  ASSERT_TRUE(wait_until([&] { return xlen(n) == 10; }, 30s)) << relay->output();
  EXPECT_EQ(metric_value(http_get(relay_port, "/metrics").body, "expiry_relay_ready"), 1);
}

TEST_F(ReliabilityTest, ASweepCallStopsAfterItsTimeBudgetAndTheNextCallGoesOn) {
  // 5000 due tasks and a limit of 10000: one call would block Redis for 50+ ms without the
  // library's 2 ms budget (a claim costs 5-50 us). Each call must stop early and say more is due.
  const int kTasks = 5000;
  auto tasks = numbered("budget-", kTasks, 0);
  schedule_all(redis_, tasks);
  const KeyLayout keys("expiry");
  long long forwarded = 0;
  int calls = 0;
  while (forwarded < kTasks && calls < kTasks) {
    // [forwarded, next_due_ms, now_us, pending, overdue, [lateness...]]
    const auto r = redis_.command(sweep_argv(keys, "expiry:stream", 10000, "sweep", "workers"));
    ASSERT_EQ(r.elements.size(), 9u) << r.describe();
    ++calls;
    forwarded += r.elements[0].integer;
    ASSERT_EQ(r.elements[3].integer, kTasks - forwarded);
    if (forwarded < kTasks) {
      EXPECT_LT(r.elements[0].integer, kTasks) << "the first call did not stop at its budget";
      const long long next_due_ms = r.elements[1].integer, now_ms = r.elements[2].integer / 1000;
      EXPECT_TRUE(next_due_ms >= 0 && next_due_ms <= now_ms) << "a call that stopped early must report the rest as due";
    }
  }
  EXPECT_GT(calls, 1);
  EXPECT_EQ(xlen(redis_), kTasks);
  EXPECT_EQ(zcard(redis_), 0);
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

TEST_F(ReliabilityTest, ASweepCallReadsDueTasksInChunksAndNeverExceedsItsLimit) {
  // The library reads due members 128 at a time; limits across chunk boundaries must claim each
  // task once, at most `limit` per call, with one lateness figure per forwarded task.
  const int kTasks = 1000;
  auto tasks = numbered("chunk-", kTasks, 0);
  schedule_all(redis_, tasks);
  const KeyLayout keys("expiry");
  long long forwarded = 0;
  int calls = 0;
  const int limits[] = {129, 250, 256, 1000};
  while (forwarded < kTasks && calls < 500) {
    const int limit = limits[calls % 4];
    const auto r = redis_.command(sweep_argv(keys, "expiry:stream", limit, "sweep", "workers"));
    ASSERT_EQ(r.elements.size(), 9u) << r.describe();
    ++calls;
    EXPECT_LE(r.elements[0].integer, limit);
    EXPECT_EQ(static_cast<long long>(r.elements[5].elements.size()), r.elements[0].integer);
    forwarded += r.elements[0].integer;
    EXPECT_EQ(r.elements[3].integer, kTasks - forwarded) << "pending after call " << calls;
  }
  EXPECT_EQ(forwarded, kTasks);
  EXPECT_EQ(zcard(redis_), 0);
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

TEST_F(ReliabilityTest, SigtermDuringASweepLosesAndDuplicatesNothing) {
  const int kTasks = 60000;
  auto tasks = numbered("bl-", kTasks, 0);
  schedule_all(redis_, tasks);  // all due at once: a backlog of many sweep batches
  auto relay = start_relay(server_, "r1", {"--sweep-batch", "50"});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) > 0; }, 10s)) << relay->output();
  EXPECT_EQ(relay->terminate(), 0) << relay->output();
  const long long forwarded = xlen(redis_);
  const long long left = zcard(redis_);
  RecordProperty("forwarded_before_sigterm", static_cast<int>(forwarded));
  EXPECT_EQ(forwarded + left, kTasks) << "every task is either forwarded or still scheduled";
  EXPECT_GT(left, 0) << "the sweep was interrupted mid-backlog (test needs a bigger backlog otherwise)";
  relay = start_relay(server_, "r1");
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) == kTasks; }, 20s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), payloads(tasks));
}

}  // namespace
}  // namespace expiry::test
