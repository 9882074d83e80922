// Retries with backoff through the relay, against a real redis-server with expiry-relay and
// order-canceller running: a failed delivery is acknowledged and its task scheduled again after
// retry_base_ms * 2^(attempt-1) with attempt + 1 (expiry_retry), and dead-lettered after its
// last attempt. The handler fails while the order key holds the wrong type (WRONGTYPE).
#include <iostream>

#include <nlohmann/json.hpp>

#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"
#include "orders/order_canceller.h"

namespace expiry::test {
namespace {

const std::string kStream = kOrderTimeoutStream;
const std::string kDeadStream = kStream + ":dead";
const KeyLayout kLayout("expiry");  // one bucket: expiry:{0}:...

class CancellerRetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
    redis_.command(load_library_argv());
    relay_ = start_relay(server_, "r1");
    wait_relay_ready(redis_, "r1", *relay_);
  }

  std::unique_ptr<ChildProcess> start_canceller(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--redis-url", server_.url(), "--consumer", "c1", "--block-ms", "200",
                                     "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000",
                                     "--metrics-port", std::to_string(metrics_port_)};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ChildProcess>(ORDER_CANCELLER_BIN, args,
                                          std::vector<std::pair<std::string, std::string>>{},
                                          server_.dir() + "/canceller.log");
  }

  void schedule_timeout(const std::string& order) {
    auto r = redis_.command(schedule_argv(kLayout, "order:" + order, ScheduleMode::Delay, 0,
                                          nlohmann::json{{"order_id", order}}.dump(), kStream));
    ASSERT_FALSE(r.failed()) << r.str;
  }

  long long group_pending() { return redis_.command({"XPENDING", kStream, "workers"}).elements.at(0).integer; }
  long long scheduled() { return integer(redis_, {"ZCARD", kLayout.schedule_key()}); }
  double metric(const std::string& series) { return metric_value(http_get(metrics_port_, "/metrics").body, series); }

  static long long ms(const std::map<std::string, std::string>& e, const char* field) {
    return std::stoll(e.at(field));
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  std::unique_ptr<ChildProcess> relay_;
  const int metrics_port_ = free_port();
};

// Fails twice, then succeeds: three deliveries, attempts 1, 2, 3, each retry no earlier than
// its backoff after the failure, and the order cancelled once.
TEST_F(CancellerRetryTest, FailsTwiceThenSucceedsAtTheBackoffDelays) {
  const long long base = 1000;
  redis_.command({"SET", "order:r", "not a hash"});  // order_cancel fails with WRONGTYPE
  auto canceller = start_canceller({"--retry-base-ms", std::to_string(base), "--retry-max-ms", "60000",
                                    "--max-deliveries", "5", "--min-idle-ms", "60000"});
  schedule_timeout("r");
  const std::string shadow = kLayout.shadow_key("order:r");
  // Failure 2 scheduled attempt 3: make the order valid before that delivery (2 * base away).
  ASSERT_TRUE(wait_until([&] { return redis_.command({"HGET", shadow, "attempt"}).str == "3"; }, 30s))
      << canceller->output() << relay_->output();
  redis_.command({"DEL", "order:r"});
  redis_.command({"HSET", "order:r", "status", "pending"});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) == 3 && group_pending() == 0; }, 30s))
      << canceller->output();
  ASSERT_EQ(redis_.command({"HGET", "order:r", "status"}).str, "cancelled");

  const Entries entries = xrange_all(redis_, kStream);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].count(entry_field::kAttempt), 0u);  // the first delivery carries none: 1
  EXPECT_EQ(entries[1].at(entry_field::kAttempt), "2");
  EXPECT_EQ(entries[2].at(entry_field::kAttempt), "3");
  for (const auto& e : entries) EXPECT_EQ(e.at(entry_field::kId), "order:r");
  // created_ms of a retried task is the Redis time of the failure that scheduled it; fired_ms
  // the time the relay delivered it again.
  const long long delay2 = ms(entries[1], entry_field::kFiredMs) - ms(entries[1], entry_field::kCreatedMs);
  const long long delay3 = ms(entries[2], entry_field::kFiredMs) - ms(entries[2], entry_field::kCreatedMs);
  const long long handled1 = ms(entries[1], entry_field::kCreatedMs) - ms(entries[0], entry_field::kFiredMs);
  const long long handled2 = ms(entries[2], entry_field::kCreatedMs) - ms(entries[1], entry_field::kFiredMs);
  std::cout << "measured retry delays (failure -> next delivery, Redis clock): attempt 2 after " << delay2
            << " ms (backoff " << base << "), attempt 3 after " << delay3 << " ms (backoff " << 2 * base
            << "); delivery -> failure recorded: " << handled1 << " ms, " << handled2 << " ms\n";
  EXPECT_EQ(ms(entries[1], entry_field::kDueMs) - ms(entries[1], entry_field::kCreatedMs), base);
  EXPECT_EQ(ms(entries[2], entry_field::kDueMs) - ms(entries[2], entry_field::kCreatedMs), 2 * base);
  EXPECT_GE(delay2, base);
  EXPECT_GE(delay3, 2 * base);
  EXPECT_LT(delay2, base + 3000);  // generous: a busy machine
  EXPECT_LT(delay3, 2 * base + 3000);

  EXPECT_EQ(metric(R"(order_canceller_outcomes_total{outcome="cancelled"})"), 1);
  EXPECT_EQ(metric(R"(order_canceller_outcomes_total{outcome="failed"})"), 2);
  EXPECT_EQ(metric(R"(order_canceller_outcomes_total{outcome="already_cancelled"})"), 0);
  EXPECT_EQ(scheduled(), 0);
  EXPECT_EQ(integer(redis_, {"EXISTS", shadow}), 0);
  EXPECT_EQ(xlen(redis_, kDeadStream), 0);
  EXPECT_EQ(canceller->terminate(), 0);
}

// Always fails: dead-lettered after max_deliveries attempts, once, nothing left scheduled or
// pending.
TEST_F(CancellerRetryTest, AlwaysFailingEndsInTheDeadLettersAfterMaxDeliveries) {
  redis_.command({"SET", "order:p", "not a hash"});
  auto canceller = start_canceller({"--retry-base-ms", "100", "--retry-max-ms", "200", "--max-deliveries", "3",
                                    "--min-idle-ms", "60000"});
  schedule_timeout("p");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kDeadStream) == 1 && group_pending() == 0; }, 30s))
      << canceller->output();
  const Entries entries = xrange_all(redis_, kStream);
  ASSERT_EQ(entries.size(), 3u);
  const Entries dead = xrange_all(redis_, kDeadStream);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].at(entry_field::kOriginalId), entries[2].at("_entry_id"));
  EXPECT_EQ(dead[0].at(entry_field::kId), "order:p");
  EXPECT_EQ(dead[0].at(entry_field::kDeliveries), "3");
  EXPECT_EQ(dead[0].at(entry_field::kAttempt), "3");
  EXPECT_EQ(dead[0].at(entry_field::kReason).rfind("failed 3 attempts: order_cancel order:p", 0), 0u)
      << dead[0].at(entry_field::kReason);
  EXPECT_EQ(scheduled(), 0);
  EXPECT_EQ(integer(redis_, {"EXISTS", kLayout.shadow_key("order:p")}), 0);
  EXPECT_EQ(integer(redis_, {"EXISTS", kLayout.trigger_key("order:p")}), 0);
  EXPECT_EQ(metric("order_canceller_entries_dead_lettered_total"), 1);
  EXPECT_EQ(canceller->terminate(), 0);
  EXPECT_EQ(xlen(redis_, kDeadStream), 1);
}

}  // namespace
}  // namespace expiry::test
