// The demo's order flow against a real redis-server, relay and order-canceller: order-sim
// drains on SIGTERM/SIGINT (no new orders, a bounded wait for those in flight, a summary marked
// "cut short", exit 0), rides out a restart of Redis, and the order timeouts travel in their own
// stream, so the canceller never touches a task another producer scheduled into the relay's
// default stream.
#include <csignal>
#include <regex>

#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"
#include "orders/order_canceller.h"

namespace expiry::test {
namespace {

using Clock = std::chrono::steady_clock;

class OrderSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    relay_ = start_relay(server_, "r1");
    wait_relay_ready(redis_, "r1", *relay_);
    // One delivery, so an entry it could not handle would be dead-lettered within the test.
    start_canceller("1");
    ASSERT_TRUE(wait_until([&] { return group_exists(kOrderTimeoutStream); }, 10s)) << canceller_->output();
  }

  // Defaults only (stream, group): the canceller as the demo runs it, with fast reclaims.
  void start_canceller(const std::string& max_deliveries) {
    if (canceller_) canceller_->terminate();
    canceller_ = std::make_unique<ChildProcess>(
        ORDER_CANCELLER_BIN,
        std::vector<std::string>{"--redis-url", server_.url(), "--consumer", "c1", "--block-ms", "200",
                                 "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000", "--min-idle-ms",
                                 "100", "--reclaim-interval-ms", "100", "--max-deliveries", max_deliveries},
        std::vector<std::pair<std::string, std::string>>{}, server_.dir() + "/canceller-c1.log");
  }

  bool group_exists(const std::string& stream) {
    auto groups = redis_.command({"XINFO", "GROUPS", stream});
    return !groups.failed() && !groups.elements.empty();
  }

  std::unique_ptr<ChildProcess> start_sim(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--redis-url", server_.url(), "--run-id", "t", "--rate", "50"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ChildProcess>(ORDER_SIM_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                          server_.dir() + "/order-sim.log");
  }

  bool order_exists(long long n) { return integer(redis_, {"EXISTS", "order:t-" + std::to_string(n)}) == 1; }

  // The number on the summary line that starts with `label`, or -1.
  static long long summary_number(const std::string& output, const std::string& label) {
    std::smatch m;
    const std::regex line("(^|\n)" + std::regex_replace(label, std::regex(R"([()+.])"), R"(\$&)") + R"( *(\d+)\n)");
    return std::regex_search(output, m, line) ? std::stoll(m[2]) : -1;
  }

  static bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  // A field of `group`'s XINFO GROUPS entry on `stream` (status or integer as text).
  std::string group_field(const std::string& stream, const std::string& group, const std::string& field) {
    for (const auto& g : redis_.command({"XINFO", "GROUPS", stream}).elements) {
      std::map<std::string, std::string> kv;
      for (size_t i = 0; i + 1 < g.elements.size(); i += 2) {
        const auto& v = g.elements[i + 1];
        kv[g.elements[i].str] = v.type == Reply::Type::Integer ? std::to_string(v.integer) : v.str;
      }
      if (kv["name"] == group) return kv[field];
    }
    return "<no group " + group + ">";
  }

  // With an AOF, so that a restart of the server keeps the orders and the schedule.
  static RedisServer::Options persistent() {
    RedisServer::Options opts;
    opts.extra_config_lines = {"appendonly yes", "appendfsync always"};
    return opts;
  }

  RedisServer server_{persistent()};
  TestConnection redis_{server_.host(), server_.port()};
  std::unique_ptr<ChildProcess> relay_;
  std::unique_ptr<ChildProcess> canceller_;
};

TEST_F(OrderSimTest, SigtermStopsNewOrdersDrainsAndPrintsACutShortSummary) {
  auto sim = start_sim({"--duration-ms", "60000", "--timeout-ms", "1000", "--grace-ms", "2000"});
  ASSERT_TRUE(wait_until([&] { return order_exists(20); }, 15s)) << sim->output();
  ASSERT_TRUE(sim->send_signal(SIGTERM));
  const auto signalled = Clock::now();
  const auto rc = sim->wait_exit(20s);
  ASSERT_TRUE(rc.has_value()) << "order-sim still running 20 s after SIGTERM:\n" << sim->output();
  const auto took = Clock::now() - signalled;
  const std::string out = sim->output();
  EXPECT_EQ(*rc, 0) << out;
  EXPECT_LT(took, 5s + 3s) << "the drain is bounded by --drain-ms (5000)";
  EXPECT_TRUE(contains(out, "cut short by SIGTERM after ")) << out;
  EXPECT_TRUE(contains(out, "\nresult: OK (cut short)\n")) << out;

  // The summary counts exactly the orders that exist: none was created after the signal.
  const long long created = summary_number(out, "orders created:");
  ASSERT_GE(created, 21) << out;
  EXPECT_LT(created, 50 * 60);
  EXPECT_TRUE(order_exists(created - 1));
  EXPECT_FALSE(order_exists(created)) << "an order was created that the summary does not count";
  // With 1 s timeouts, the 5 s drain resolves every order in flight.
  EXPECT_EQ(summary_number(out, "wrongly cancelled (paid orders cancelled):"), 0) << out;
  EXPECT_EQ(summary_number(out, "missed (unpaid, still pending after timeout + grace):"), 0) << out;
  EXPECT_EQ(summary_number(out, "left pending (timeout + grace still ahead; their tasks stay scheduled):"), 0) << out;
  EXPECT_EQ(summary_number(out, "paid before timeout:") + summary_number(out, "cancelled by timeout:"), created)
      << out;
}

TEST_F(OrderSimTest, TheDrainIsBoundedAndOrdersStillAheadAreLeftPendingNotMissed) {
  // 10 s timeouts, payments 1-7 s after each order: waiting for all of it would take over 10 s.
  auto sim = start_sim({"--duration-ms", "60000", "--timeout-ms", "10000", "--drain-ms", "1000"});
  ASSERT_TRUE(wait_until([&] { return order_exists(10); }, 15s)) << sim->output();
  ASSERT_TRUE(sim->send_signal(SIGINT));
  const auto signalled = Clock::now();
  const auto rc = sim->wait_exit(20s);
  ASSERT_TRUE(rc.has_value()) << sim->output();
  const std::string out = sim->output();
  EXPECT_EQ(*rc, 0) << out;
  EXPECT_LT(Clock::now() - signalled, 1s + 3s) << "the drain is bounded by --drain-ms (1000)";
  EXPECT_TRUE(contains(out, "cut short by SIGINT after ")) << out;
  EXPECT_TRUE(contains(out, "waited up to 1000 ms for those in flight")) << out;
  const long long created = summary_number(out, "orders created:");
  const long long paid = summary_number(out, "paid before timeout:");
  ASSERT_GE(created, 11) << out;
  EXPECT_EQ(summary_number(out, "cancelled by timeout:"), 0) << out;
  EXPECT_EQ(summary_number(out, "missed (unpaid, still pending after timeout + grace):"), 0) << out;
  EXPECT_EQ(summary_number(out, "left pending (timeout + grace still ahead; their tasks stay scheduled):"),
            created - paid)
      << out;
  EXPECT_TRUE(contains(out, "\nresult: OK (cut short)\n")) << out;
  // The timeouts of the orders left pending stay scheduled, to fire when due.
  EXPECT_EQ(zcard(redis_), created - paid);
}

TEST_F(OrderSimTest, ASecondSignalEndsTheDrainAtOnce) {
  // Payments come up to 42 s after their order: a 60 s drain would wait for them.
  auto sim = start_sim({"--duration-ms", "60000", "--timeout-ms", "60000", "--drain-ms", "60000"});
  ASSERT_TRUE(wait_until([&] { return order_exists(10); }, 15s)) << sim->output();
  ASSERT_TRUE(sim->send_signal(SIGTERM));
  ASSERT_TRUE(wait_until([&] { return contains(sim->output(), "no new orders; waiting up to 60000 ms"); }, 5s))
      << sim->output();
  EXPECT_FALSE(sim->wait_exit(1s).has_value()) << "precondition: the drain should still wait\n" << sim->output();
  ASSERT_TRUE(sim->send_signal(SIGTERM));
  const auto rc = sim->wait_exit(5s);
  ASSERT_TRUE(rc.has_value()) << "a second SIGTERM did not end the drain:\n" << sim->output();
  EXPECT_EQ(*rc, 0) << sim->output();
  EXPECT_TRUE(contains(sim->output(), "\nresult: OK (cut short)\n")) << sim->output();
}

TEST_F(OrderSimTest, ARestartOfRedisMidRunLosesAndDuplicatesNothing) {
  // The default 5 deliveries: an entry whose cancel the restart cut off counts one delivery
  // (un-counting it needs Redis too), and is handled again once Redis is back.
  start_canceller("5");
  // 1 s timeouts: orders fall due while Redis is down, and after it is back.
  auto sim = start_sim({"--duration-ms", "6000", "--timeout-ms", "1000", "--grace-ms", "3000"});
  ASSERT_TRUE(wait_until([&] { return order_exists(60); }, 15s)) << sim->output();
  server_.stop();  // SHUTDOWN: the AOF keeps everything written so far
  server_.start();
  const auto rc = sim->wait_exit(60s);
  ASSERT_TRUE(rc.has_value()) << "order-sim still running 60 s after the restart:\n" << sim->output();
  const std::string out = sim->output();
  EXPECT_EQ(*rc, 0) << out;
  EXPECT_TRUE(contains(out, "connecting to Redis again")) << "precondition: the restart reached order-sim\n" << out;
  EXPECT_TRUE(contains(out, "\nresult: OK\n")) << out;
  const long long created = summary_number(out, "orders created:");
  EXPECT_GE(created, 61) << out;
  EXPECT_EQ(summary_number(out, "wrongly cancelled (paid orders cancelled):"), 0) << out;
  EXPECT_EQ(summary_number(out, "missed (unpaid, still pending after timeout + grace):"), 0) << out;
  EXPECT_EQ(summary_number(out, "paid before timeout:") + summary_number(out, "cancelled by timeout:"), created)
      << out;
  // Exactly one timeout entry per cancelled order reached the stream: none twice.
  TestConnection after{server_.host(), server_.port()};  // redis_'s connection ended with the restart
  EXPECT_EQ(integer(after, {"XLEN", kOrderTimeoutStream}), summary_number(out, "cancelled by timeout:")) << out;
}

TEST_F(OrderSimTest, TheCancellerLeavesTasksInTheDefaultStreamAlone) {
  // A user's own tasks, scheduled into the relay's default stream while the demo runs: one that
  // is no order at all, and one whose id and payload look like an order the canceller could cancel.
  redis_.command({"HSET", "order:mine", "status", "pending"});
  const KeyLayout keys("expiry");
  ASSERT_FALSE(redis_.command(schedule_argv(keys, "invoice:7", ScheduleMode::Delay, 300, "remind")).failed());
  ASSERT_FALSE(
      redis_.command(schedule_argv(keys, "order:mine", ScheduleMode::Delay, 300, R"({"order_id":"mine"})")).failed());

  auto sim = start_sim({"--duration-ms", "3000", "--timeout-ms", "1000", "--grace-ms", "3000"});
  const auto rc = sim->wait_exit(30s);
  ASSERT_TRUE(rc.has_value()) << sim->output();
  const std::string out = sim->output();
  ASSERT_EQ(*rc, 0) << out;
  const long long cancelled = summary_number(out, "cancelled by timeout:");
  EXPECT_GT(cancelled, 0) << out;
  // The canceller settles every order timeout. (It has run for the whole simulation: had it read
  // the default stream, its group there would show a delivered id below.)
  ASSERT_TRUE(wait_until([&] { return group_field(kOrderTimeoutStream, "workers", "pending") == "0"; }, 30s)) << out;

  // The order timeouts went to their own stream, and only they did.
  const auto order_entries = xrange_all(redis_, kOrderTimeoutStream);
  // (At least: a payment that races its timeout leaves an entry for a paid order.)
  EXPECT_GE(static_cast<long long>(order_entries.size()), cancelled);
  for (const auto& e : order_entries) EXPECT_EQ(e.at(entry_field::kId).rfind("order:t-", 0), 0u) << e.at(entry_field::kId);
  EXPECT_EQ(group_field(kOrderTimeoutStream, "workers", "pending"), "0");

  // The user's tasks are in the default stream, untouched: never delivered to any consumer of
  // its group, nothing dead-lettered, the look-alike order still pending.
  const auto user_entries = xrange_all(redis_, "expiry:stream");
  ASSERT_EQ(user_entries.size(), 2u);
  std::set<std::string> ids;
  for (const auto& e : user_entries) ids.insert(e.at(entry_field::kId));
  EXPECT_EQ(ids, (std::set<std::string>{"invoice:7", "order:mine"}));
  EXPECT_EQ(group_field("expiry:stream", "workers", "last-delivered-id"), "0-0");
  EXPECT_EQ(group_field("expiry:stream", "workers", "pending"), "0");
  EXPECT_EQ(group_field("expiry:stream", "workers", "consumers"), "0");
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:stream:dead"}), 0);
  EXPECT_EQ(integer(redis_, {"EXISTS", std::string(kOrderTimeoutStream) + ":dead"}), 0);
  EXPECT_EQ(redis_.command({"HGET", "order:mine", "status"}).str, "pending");
  EXPECT_EQ(canceller_->terminate(), 0);
  EXPECT_FALSE(contains(canceller_->output(), "invoice:7")) << canceller_->output();
}

}  // namespace
}  // namespace expiry::test
