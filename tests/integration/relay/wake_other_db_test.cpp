// Wake messages of another database: pub/sub spans every database of a Redis, so a relay
// serving one database receives the wakes of tasks scheduled in another. It acts only on
// "<due>@<its db>" and the legacy "<due>", and ignores "<due>@<another db>" (not counted in
// expiry_relay_wakeups_total). Against a real redis-server and a real expiry-relay.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "relay_harness.h"

namespace expiry::test {
namespace {

const KeyLayout kKeys("expiry", 0);
constexpr long long kDue = 4102444800000;  // 2100-01-01: never fires during the test

class WakeOtherDbTest : public ::testing::Test {
 protected:
  // Starts expiry-relay "r1" on database `db` with metrics on a free port, and waits until it
  // is subscribed and has answered its first sweep.
  void start(int db) {
    metrics_port_ = free_port();
    other_db_ = db == 0 ? 1 : 0;
    relay_ = std::make_unique<ChildProcess>(
        EXPIRY_RELAY_BIN,
        std::vector<std::string>{"--redis-url", server_.url(db), "--instance", "r1", "--reconnect-initial-ms", "20",
                                 "--reconnect-max-ms", "200", "--metrics-port", std::to_string(metrics_port_)},
        std::vector<std::pair<std::string, std::string>>{}, server_.dir() + "/relay-r1.log");
    TestConnection conn(server_.host(), server_.port());
    conn.command({"SELECT", std::to_string(db)});
    ASSERT_NO_FATAL_FAILURE(wait_relay_ready(conn, "r1", *relay_));
    ASSERT_TRUE(wait_until([&] { return metric("expiry_relay_sweep_batches_total") >= 1; }, 10s))
        << relay_->output();
  }

  double metric(const std::string& series) {
    const HttpResponse r = http_get(metrics_port_, "/metrics");
    if (r.status != 200) return -1;
    return metric_value(r.body, series);
  }
  double wakeups() { return metric("expiry_relay_wakeups_total"); }

  void publish(const std::string& message) {
    EXPECT_EQ(integer(redis_, {"PUBLISH", kKeys.wake_channel(), message}), 1) << "the relay is subscribed";
  }

  // Waits until the relay has handled every message published before: publishes an expired
  // event of a trigger key in a database the relay does not serve, which it counts apart
  // (events_other_db), and waits for it (its subscriber connection receives messages in publish
  // order).
  void barrier() {
    const double events = metric("expiry_relay_events_other_db_total");
    EXPECT_EQ(integer(redis_, {"PUBLISH", "__keyevent@" + std::to_string(other_db_) + "__:expired",
                               kKeys.trigger_key("barrier")}),
              1);
    EXPECT_TRUE(wait_until([&] { return metric("expiry_relay_events_other_db_total") >= events + 1; }, 10s))
        << relay_->output();
  }

  // How many of `messages`, published on the wake channel, the relay counted as wakeups.
  double counted_of(const std::vector<std::string>& messages) {
    const double before = wakeups();
    for (const auto& m : messages) publish(m);
    barrier();
    return wakeups() - before;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  std::unique_ptr<ChildProcess> relay_;
  int metrics_port_ = 0;
  int other_db_ = 0;  // a database the relay does not serve
};

TEST_F(WakeOtherDbTest, ARelayOnDb0IgnoresWakesOfDb1AndCountsItsOwnAndLegacyOnes) {
  ASSERT_NO_FATAL_FAILURE(start(0));
  const std::string due = std::to_string(kDue);
  EXPECT_EQ(counted_of({due + "@1"}), 0);
  EXPECT_EQ(counted_of({due + "@1", due + "@15"}), 0);
  EXPECT_EQ(counted_of({due + "@0"}), 1);
  EXPECT_EQ(counted_of({due}), 1);
  EXPECT_EQ(counted_of({due + "@1", due + "@0", due + "@2", due}), 2);
  // A task scheduled through the library by a producer on db 1: its wake is not counted.
  TestConnection db1(server_.host(), server_.port());
  db1.command({"SELECT", "1"});
  ASSERT_FALSE(db1.command(load_library_argv()).failed());
  const double before = wakeups();
  const Reply r = db1.command(schedule_argv(kKeys, "db1-task", ScheduleMode::At, kDue, "p", "", 1));
  ASSERT_FALSE(r.failed()) << r.describe();
  barrier();
  EXPECT_EQ(wakeups(), before);
  // ... and a producer on db 0's is.
  const Reply own = redis_.command(schedule_argv(kKeys, "db0-task", ScheduleMode::At, kDue, "p", "", 0));
  ASSERT_FALSE(own.failed()) << own.describe();
  barrier();
  EXPECT_EQ(wakeups(), before + 1);
  EXPECT_EQ(zcard(redis_), 1);
  EXPECT_EQ(zcard(db1), 1);
  EXPECT_TRUE(relay_->running());
}

TEST_F(WakeOtherDbTest, ARelayOnDb1CountsOnlyDb1AndLegacyWakes) {
  ASSERT_NO_FATAL_FAILURE(start(1));
  const std::string due = std::to_string(kDue);
  EXPECT_EQ(counted_of({due + "@0"}), 0);
  EXPECT_EQ(counted_of({due + "@1", due}), 2);
}

}  // namespace
}  // namespace expiry::test
