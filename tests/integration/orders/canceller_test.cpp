// order-canceller against a real redis-server: idempotent cancels, paid orders left alone,
// reclaim of entries a crashed consumer left pending, dead-lettering of poison entries.
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"
#include "orders/order_canceller.h"

namespace expiry::test {
namespace {

// The canceller's default stream (order timeouts have their own) and its dead-letter stream.
const std::string kStream = kOrderTimeoutStream;
const std::string kDeadStream = kStream + ":dead";

class CancellerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_.command({"XGROUP", "CREATE", kStream, "workers", "0", "MKSTREAM"});
    redis_.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
  }

  std::unique_ptr<ChildProcess> start_canceller(const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--redis-url", server_.url(), "--consumer", name, "--block-ms", "200",
                                     "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ChildProcess>(ORDER_CANCELLER_BIN, args,
                                          std::vector<std::pair<std::string, std::string>>{},
                                          server_.dir() + "/canceller-" + name + ".log");
  }

  void create_order(const std::string& id, const std::string& status = "pending") {
    redis_.command({"HSET", "order:" + id, "status", status});
  }

  // Appends a fired timeout task for order `id`, as the relay would.
  std::string add_task(const std::string& id, const std::string& due_ms = "1000") {
    const std::string payload = nlohmann::json{{"order_id", id}}.dump();
    return redis_
        .command({"XADD", kStream, "*", "id", "order:" + id, "payload", payload, "due_ms", due_ms, "fired_ms",
                  due_ms, "via", "sweep"})
        .str;
  }

  long long group_pending() {
    auto r = redis_.command({"XPENDING", kStream, "workers"});
    return r.elements.at(0).integer;
  }

  // A field of the group's XINFO GROUPS entry (e.g. "entries-read").
  long long group_info(const std::string& field) {
    auto g = redis_.command({"XINFO", "GROUPS", kStream});
    const auto& kv = g.elements.at(0).elements;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (kv[i].str == field) return kv[i + 1].integer;
    }
    return -1;
  }

  std::string status_of(const std::string& id) { return redis_.command({"HGET", "order:" + id, "status"}).str; }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(CancellerTest, CancelsPendingOrdersIdempotently) {
  create_order("1");
  create_order("2");
  auto canceller = start_canceller("c1");
  add_task("1", "1234");
  add_task("1", "1234");  // a duplicate delivery of the same timeout
  add_task("2");
  ASSERT_TRUE(wait_until([&] { return status_of("1") == "cancelled" && status_of("2") == "cancelled"; }, 5s))
      << canceller->output();
  ASSERT_TRUE(wait_until([&] { return group_pending() == 0 && group_info("entries-read") == 3; }, 5s));
  auto order = redis_.command({"HGETALL", "order:1"});
  std::map<std::string, std::string> fields;
  for (size_t i = 0; i + 1 < order.elements.size(); i += 2) fields[order.elements[i].str] = order.elements[i + 1].str;
  EXPECT_EQ(fields["cancel_reason"], "payment timeout");
  EXPECT_EQ(fields["due_ms"], "1234");
  EXPECT_EQ(fields["task_id"], "order:1");
  EXPECT_FALSE(fields["cancelled_ms"].empty());
  const std::string first_cancel = fields["cancelled_ms"];
  EXPECT_EQ(canceller->terminate(), 0);
  EXPECT_NE(canceller->output().find("cancelled=2 skipped_paid=0 already_cancelled=1"), std::string::npos)
      << canceller->output();
  // The duplicate did not overwrite the first cancellation.
  EXPECT_EQ(redis_.command({"HGET", "order:1", "cancelled_ms"}).str, first_cancel);
}

TEST_F(CancellerTest, PaidOrdersAreNeverCancelled) {
  create_order("paid-1", "paid");
  create_order("paid-2");
  auto r = redis_.command({"FCALL", "order_pay", "1", "order:paid-2"});
  EXPECT_EQ(r.str, "pending");
  auto canceller = start_canceller("c1");
  add_task("paid-1");
  add_task("paid-2");
  add_task("nobody");  // no such order: counted, acknowledged
  ASSERT_TRUE(wait_until([&] { return group_pending() == 0 && group_info("entries-read") == 3; }, 5s));
  EXPECT_EQ(canceller->terminate(), 0);
  EXPECT_EQ(status_of("paid-1"), "paid");
  EXPECT_EQ(status_of("paid-2"), "paid");
  EXPECT_NE(canceller->output().find("cancelled=0 skipped_paid=2 already_cancelled=0 missing=1"), std::string::npos)
      << canceller->output();
}

TEST_F(CancellerTest, ReclaimsEntriesACrashedConsumerLeftPending) {
  for (int i = 0; i < 20; ++i) {
    create_order("r" + std::to_string(i));
    add_task("r" + std::to_string(i));
  }
  // A consumer reads the batch and dies before acknowledging anything.
  auto read = redis_.command({"XREADGROUP", "GROUP", "workers", "crashed", "COUNT", "100", "STREAMS", kStream, ">"});
  ASSERT_EQ(read.elements.at(0).elements.at(1).elements.size(), 20u);
  ASSERT_EQ(group_pending(), 20);

  auto canceller = start_canceller("c1", {"--min-idle-ms", "300", "--reclaim-interval-ms", "100"});
  ASSERT_TRUE(wait_until([&] { return group_pending() == 0; }, 10s)) << canceller->output();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(status_of("r" + std::to_string(i)), "cancelled");
  EXPECT_NE(canceller->output().find("reclaimed 20 entries"), std::string::npos) << canceller->output();
}

TEST_F(CancellerTest, CancellerKilledMidBatchLosesNothing) {
  const int kOrders = 3000;
  for (int i = 0; i < kOrders; ++i) create_order("k" + std::to_string(i));
  auto victim = start_canceller("victim", {"--min-idle-ms", "500", "--reclaim-interval-ms", "100", "--batch", "50"});
  std::vector<std::vector<std::string>> adds;
  for (int i = 0; i < kOrders; ++i) {
    adds.push_back({"XADD", kStream, "*", "id", "order:k" + std::to_string(i), "payload",
                    nlohmann::json{{"order_id", "k" + std::to_string(i)}}.dump(), "due_ms", "1"});
  }
  pipeline(redis_, adds);
  // Freeze the victim until it is caught holding unacknowledged entries, then SIGKILL it.
  auto victim_pending = [&] {
    auto r = redis_.command({"XPENDING", kStream, "workers", "-", "+", "1000", "victim"});
    return r.elements.size();
  };
  // An XACK the victim sent just before it stopped can still reach Redis after the stop: the
  // entries held are counted once that count stays the same over two samples.
  size_t held = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        ::kill(victim->pid(), SIGSTOP);
        size_t before = victim_pending();
        for (;;) {
          std::this_thread::sleep_for(10ms);
          held = victim_pending();
          if (held == before) break;
          before = held;
        }
        if (held == 0) ::kill(victim->pid(), SIGCONT);
        return held > 0;
      },
      10s, 1ms));
  victim->kill_hard();
  RecordProperty("entries_held_by_killed_consumer", static_cast<int>(held));
  auto survivor = start_canceller("survivor", {"--min-idle-ms", "500", "--reclaim-interval-ms", "100", "--batch", "50"});
  auto all_cancelled = [&] {
    std::vector<std::vector<std::string>> cmds;
    for (int i = 0; i < kOrders; ++i) cmds.push_back({"HGET", "order:k" + std::to_string(i), "status"});
    std::vector<Reply> replies;
    pipeline(redis_, cmds, &replies);
    for (auto& r : replies) {
      if (r.str != "cancelled") return false;
    }
    return true;
  };
  ASSERT_TRUE(wait_until([&] { return all_cancelled() && group_pending() == 0; }, 20s))
      << "pending=" << group_pending() << "\n"
      << survivor->output();
  EXPECT_NE(survivor->output().find("reclaimed"), std::string::npos) << survivor->output();
  EXPECT_EQ(survivor->terminate(), 0);
}

// A handler failure is retried through the relay's schedule (expiry_retry) and dead-lettered
// after its last attempt; canceller_retry_test.cpp checks the delays.
TEST_F(CancellerTest, PoisonEntriesAreDeadLetteredAfterMaxDeliveries) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  redis_.command({"SET", "order:poison", "not a hash"});  // order_cancel fails with WRONGTYPE
  create_order("fine");
  auto canceller = start_canceller("c1", {"--max-deliveries", "3", "--retry-base-ms", "50", "--min-idle-ms", "200",
                                          "--reclaim-interval-ms", "100"});
  add_task("poison");
  add_task("fine");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDeadStream) == 1; }, 20s)) << canceller->output();
  ASSERT_TRUE(wait_until([&] { return group_pending() == 0; }, 5s));
  auto dead = xrange_all(redis_, kDeadStream);
  ASSERT_EQ(dead.size(), 1u);
  auto entries = xrange_all(redis_, kStream);  // poison, fine, poison attempt 2, poison attempt 3
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(dead[0][entry_field::kOriginalId], entries[3]["_entry_id"]);
  EXPECT_EQ(dead[0][entry_field::kDeliveries], "3");
  EXPECT_EQ(dead[0][entry_field::kId], "order:poison");
  EXPECT_NE(dead[0][entry_field::kReason].find("failed 3 attempts"), std::string::npos);
  EXPECT_EQ(dead[0][entry_field::kPayload], R"({"order_id":"poison"})");
  EXPECT_EQ(status_of("fine"), "cancelled");
  EXPECT_EQ(canceller->terminate(), 0);
}

// Ids and payloads come from whoever can write the stream. Entries whose id, payload or order
// id hold line breaks are logged with them escaped: every line of the log is one the
// canceller wrote, none is forged.
TEST_F(CancellerTest, LogLinesCannotBeForgedByEntryIdsOrPayloads) {
  const std::string forged_line = "2030-01-01T00:00:00.000 error order-canceller: FORGED";
  auto canceller = start_canceller(
      "c1", {"--max-deliveries", "2", "--min-idle-ms", "200", "--reclaim-interval-ms", "100"});
  // The id is the order key: the order is missing, and the warning names the key.
  redis_.command({"XADD", kStream, "*", "id", "order:x\n" + forged_line + "-ID", "payload",
                  "not json\n" + forged_line + "-PAYLOAD", "due_ms", "1"});
  // The order id from the payload, with CR LF.
  redis_.command({"XADD", kStream, "*", "id", "order:y", "payload",
                  nlohmann::json{{"order_id", "y\r\n" + forged_line + "-ORDER"}}.dump(), "due_ms", "1"});
  // No order id at all: rejected (logged with the reason), dead-lettered at once.
  redis_.command({"XADD", kStream, "*", "id", "refund:1\n" + forged_line + "-POISON", "payload",
                  "\n" + forged_line + "-P2", "due_ms", "1"});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDeadStream) == 1 && group_pending() == 0; }, 20s))
      << canceller->output();
  EXPECT_EQ(canceller->terminate(), 0);
  const std::string log = canceller->output();
  EXPECT_NE(log.find("timeout for order:x\\n" + forged_line + "-ID but the order does not exist"), std::string::npos)
      << log;
  EXPECT_NE(log.find("timeout for order:y\\r\\n" + forged_line + "-ORDER but the order does not exist"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("no order id in task refund:1\\n" + forged_line + "-POISON"), std::string::npos) << log;
  const std::regex own_line(
      R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} (trace|debug|info|warning|error|critical) order-canceller: .*$)");
  std::istringstream lines(log);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    EXPECT_TRUE(std::regex_match(line, own_line)) << "not a line of the canceller: " << line;
    EXPECT_NE(line.rfind(forged_line, 0), 0u) << "forged line: " << line;
    EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  }
  EXPECT_GT(count, 3);
}

// XGROUP DESTROY while the canceller runs: the group is created again at $, so nothing handled
// before is handled again (no poison entry dead-lettered twice), new entries are handled, and
// the event is logged as an error with the XGROUP SETID to replay, and counted.
TEST_F(CancellerTest, DestroyedGroupIsRecreatedAtTheEndAndOldEntriesAreNotHandledAgain) {
  const int port = free_port();
  redis_.command({"SET", "order:poison", "not a hash"});  // order_cancel fails with WRONGTYPE
  // One attempt: the first failure dead-letters the poison entry (no relay runs here).
  auto canceller = start_canceller("c1", {"--max-deliveries", "1", "--min-idle-ms", "200", "--reclaim-interval-ms",
                                          "100", "--metrics-port", std::to_string(port)});
  for (int i = 0; i < 5; ++i) create_order("old" + std::to_string(i));
  for (int i = 0; i < 5; ++i) add_task("old" + std::to_string(i));
  const std::string poison_id = add_task("poison");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDeadStream) == 1 && group_pending() == 0; }, 20s))
      << canceller->output();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(status_of("old" + std::to_string(i)), "cancelled");
  auto metric = [&](const std::string& series) { return metric_value(http_get(port, "/metrics").body, series); };
  EXPECT_EQ(metric("order_canceller_entries_read_total"), 6);
  EXPECT_EQ(metric("order_canceller_group_recreated_total"), 0);

  ASSERT_EQ(integer(redis_, {"XGROUP", "DESTROY", kStream, "workers"}), 1);
  // The canceller notices (its blocked read or next read answers NOGROUP) and creates it again.
  ASSERT_TRUE(wait_until(
      [&] {
        auto g = redis_.command({"XINFO", "GROUPS", kStream});
        return !g.failed() && g.elements.size() == 1;
      },
      10s))
      << canceller->output();
  ASSERT_TRUE(wait_until([&] { return metric("order_canceller_group_recreated_total") == 1; }, 10s))
      << canceller->output();
  // At $: its last delivered id is the newest entry, the poison one.
  auto groups = redis_.command({"XINFO", "GROUPS", kStream});
  std::map<std::string, std::string> group;
  const auto& kv = groups.elements.at(0).elements;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) group[kv[i].str] = kv[i + 1].str;
  EXPECT_EQ(group["last-delivered-id"], poison_id);

  for (int i = 0; i < 3; ++i) create_order("new" + std::to_string(i));
  for (int i = 0; i < 3; ++i) add_task("new" + std::to_string(i));
  ASSERT_TRUE(wait_until(
      [&] {
        return status_of("new0") == "cancelled" && status_of("new1") == "cancelled" &&
               status_of("new2") == "cancelled" && group_pending() == 0;
      },
      10s))
      << canceller->output();
  // Entries are read in stream order: had the six old ones been delivered again, they would
  // have been read before the three new ones.
  EXPECT_EQ(metric("order_canceller_entries_read_total"), 9);
  EXPECT_EQ(metric(R"(order_canceller_outcomes_total{outcome="already_cancelled"})"), 0);
  EXPECT_EQ(metric("order_canceller_entries_dead_lettered_total"), 1);
  EXPECT_EQ(xlen(redis_, kDeadStream), 1);  // the poison entry is not pending: never dead-lettered again

  EXPECT_EQ(canceller->terminate(), 0);
  const std::string log = canceller->output();
  EXPECT_NE(log.find("consumer group workers on " + kStream + " was destroyed; created it again at $"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("XGROUP SETID " + kStream + " workers " + poison_id), std::string::npos) << log;
  EXPECT_NE(log.find("cancelled=8 skipped_paid=0 already_cancelled=0"), std::string::npos) << log;
  EXPECT_NE(log.find("group_recreated=1"), std::string::npos) << log;
}

// At first start the group may not exist: it is created at 0 and the whole stream is handled.
TEST(CancellerFirstStart, CreatesAMissingGroupAtZeroAndHandlesTheWholeStream) {
  RedisServer server;
  TestConnection redis(server.host(), server.port());
  redis.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
  for (const char* id : {"a", "b"}) {
    redis.command({"HSET", std::string("order:") + id, "status", "pending"});
    redis.command({"XADD", kStream, "*", "id", std::string("order:") + id, "payload", "", "due_ms", "1"});
  }
  ChildProcess canceller(ORDER_CANCELLER_BIN, {"--redis-url", server.url(), "--consumer", "c1", "--block-ms", "200",
                                               "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000"});
  ASSERT_TRUE(wait_until(
      [&] {
        return redis.command({"HGET", "order:a", "status"}).str == "cancelled" &&
               redis.command({"HGET", "order:b", "status"}).str == "cancelled";
      },
      10s))
      << canceller.output();
  EXPECT_EQ(canceller.terminate(), 0);
  EXPECT_EQ(canceller.output().find("was destroyed"), std::string::npos) << canceller.output();
  EXPECT_NE(canceller.output().find("group_recreated=0"), std::string::npos) << canceller.output();
}

TEST_F(CancellerTest, EndToEndWithTheRelay) {
  auto relay = start_relay(server_, "r1");
  auto canceller = start_canceller("c1");
  wait_relay_ready(redis_, "r1", *relay);
  create_order("e2e");
  redis_.command(load_library_argv());
  redis_.command(
      schedule_argv(KeyLayout("expiry"), "order:e2e", ScheduleMode::Delay, 200, R"({"order_id":"e2e"})", kStream));
  ASSERT_TRUE(wait_until([&] { return status_of("e2e") == "cancelled"; }, 5s)) << canceller->output();
  ASSERT_TRUE(wait_until([&] { return group_pending() == 0; }, 5s));
}

TEST_F(CancellerTest, MetricsCountOutcomes) {
  const int port = free_port();
  auto canceller = start_canceller("c1", {"--metrics-port", std::to_string(port)});
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/readyz").status == 200; }, 5s)) << canceller->output();
  EXPECT_EQ(http_get(port, "/healthz").status, 200);
  create_order("a");
  create_order("b", "paid");
  add_task("a");
  add_task("b");
  add_task("ghost");
  std::string text;
  ASSERT_TRUE(wait_until(
      [&] {
        text = http_get(port, "/metrics").body;
        return metric_value(text, "order_canceller_processed_total") == 3;
      },
      5s))
      << text;
  EXPECT_EQ(metric_value(text, R"(order_canceller_outcomes_total{outcome="cancelled"})"), 1) << text;
  EXPECT_EQ(metric_value(text, R"(order_canceller_outcomes_total{outcome="skipped_paid"})"), 1);
  EXPECT_EQ(metric_value(text, R"(order_canceller_outcomes_total{outcome="missing_order"})"), 1);
  EXPECT_TRUE(wait_until([&] { return metric_value(http_get(port, "/metrics").body, "order_canceller_entries_acked_total") == 3; }, 5s));
  EXPECT_EQ(metric_value(text, "order_canceller_ready"), 1);
}

// A config or password file that is a directory, or whose read fails: exit 2 naming the file,
// never an uncaught exception (abort, exit 134). No Redis is needed: nothing connects.
TEST(CancellerBadConfig, ConfigOrPasswordFileThatCannotBeReadExitsTwo) {
  std::string dir = ::testing::TempDir() + "canceller_bad_files_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  struct Case {
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> env;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--config", dir}, {}, "config file " + dir + " is a directory"},
      {{}, {{"ORDER_CANCELLER_CONFIG", dir}}, "config file " + dir + " is a directory"},
      {{"--password-file", dir}, {}, "password file " + dir + " is a directory"},
      {{"--config", "/proc/self/mem"}, {}, "cannot read config file /proc/self/mem: Input/output error"},
      {{"--password-file", "/proc/self/mem"}, {}, "cannot read password file /proc/self/mem: Input/output error"},
  };
  for (const auto& c : cases) {
    ChildProcess p(ORDER_CANCELLER_BIN, c.args, c.env);
    auto code = p.wait_exit(10s);
    ASSERT_TRUE(code.has_value()) << p.output();
    EXPECT_EQ(*code, 2) << c.message << ": " << p.output();
    EXPECT_NE(p.output().find("order-canceller: configuration error: " + c.message), std::string::npos)
        << p.output();
  }
  rmdir(dir.c_str());
}

TEST(OrderKey, ComesFromThePayloadOrTheTaskId) {
  StreamEntry e;
  e.fields = {{"id", "order:9"}, {"payload", R"({"order_id":"42"})"}};
  EXPECT_EQ(order_key_of(e), "order:42");
  e.fields = {{"id", "order:9"}, {"payload", "not json"}};
  EXPECT_EQ(order_key_of(e), "order:9");
  e.fields = {{"id", "refund:9"}, {"payload", R"({"order_id":7})"}};
  EXPECT_EQ(order_key_of(e), "");
}

}  // namespace
}  // namespace expiry::test
