// The relay's core promises against a real redis-server: exactly once, payload intact,
// cancel, reschedule, several relays racing, and on-time firing despite late expired events.
#include <algorithm>

#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"

namespace expiry::test {
namespace {

class RelayTest : public ::testing::Test {
 protected:
  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(RelayTest, ScheduledTaskAppearsOnceWithPayloadIntact) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  static const char kPayload[] = "bin\0ary \xff\xfe payload {\"order\":42}\n";
  const std::string payload(kPayload, sizeof(kPayload) - 1);  // keeps the embedded NUL
  auto due = schedule_all(redis_, {{"order:42", 200, payload}});

  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1 && zcard(redis_) == 0; }, 5s)) << relay->output();
  auto entries = xrange_all(redis_, "expiry:stream");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0][entry_field::kId], "order:42");
  EXPECT_EQ(entries[0][entry_field::kPayload], payload);
  EXPECT_EQ(entries[0][entry_field::kDueMs], std::to_string(due["order:42"]));
  EXPECT_GE(std::stoll(entries[0][entry_field::kFiredMs]), due["order:42"]);
  EXPECT_TRUE(entries[0][entry_field::kVia] == entry_field::kViaSweep || entries[0][entry_field::kVia] == entry_field::kViaEvent);
  EXPECT_FALSE(entries[0][entry_field::kCreatedMs].empty());
  // The claim removed the shadow hash and the trigger key.
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:order:42", "expiry:{0}:t:order:42"}), 0);
  // The consumer group exists for consumers.
  auto groups = redis_.command({"XINFO", "GROUPS", "expiry:stream"});
  ASSERT_EQ(groups.elements.size(), 1u);
  EXPECT_EQ(groups.elements[0].elements[1].str, "workers");
  EXPECT_EQ(relay->terminate(), 0);
}

TEST_F(RelayTest, CancelledTasksNeverAppear) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  std::vector<Task> tasks;
  for (int i = 0; i < 200; ++i) tasks.push_back({"t" + std::to_string(i), 300 + i, "p" + std::to_string(i)});
  schedule_all(redis_, tasks);
  KeyLayout keys("expiry");
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 200; ++i) {
    const std::string id = "t" + std::to_string(i);
    if (i % 2 == 0) {
      auto r = redis_.command(cancel_argv(keys, id));
      EXPECT_EQ(r.integer, 1) << r.describe();
    } else {
      expected[id] = "p" + std::to_string(i);
    }
  }
  // A second cancel of the same id reports that nothing was pending.
  EXPECT_EQ(redis_.command(cancel_argv(keys, "t0")).integer, 0);
  // Once the schedule is empty nothing else can fire, so this is the final stream.
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= 100; }, 5s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), expected);
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:task:t0", "expiry:{0}:t:t0"}), 0);
}

TEST_F(RelayTest, RescheduledTaskFiresOnlyAtItsNewTime) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  auto first = schedule_all(redis_, {{"order:7", 200, "old"}});
  auto second = schedule_all(redis_, {{"order:7", 1500, "new"}});
  ASSERT_GT(second["order:7"], first["order:7"] + 1000);
  EXPECT_EQ(zcard(redis_), 1);

  // Well past the old due time, nothing has fired.
  ASSERT_TRUE(wait_until([&] { return redis_now_ms(redis_) > first["order:7"] + 500; }, 5s));
  EXPECT_EQ(xlen(redis_), 0);

  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 5s)) << relay->output();
  auto entries = xrange_all(redis_, "expiry:stream");
  EXPECT_EQ(entries[0][entry_field::kPayload], "new");
  EXPECT_EQ(entries[0][entry_field::kDueMs], std::to_string(second["order:7"]));
  EXPECT_GE(std::stoll(entries[0][entry_field::kFiredMs]), second["order:7"]);
}

TEST_F(RelayTest, RescheduledEarlierFiresAtTheEarlierTime) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  schedule_all(redis_, {{"a", 60000, "late"}});
  auto moved = schedule_all(redis_, {{"a", 300, "soon"}});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 3s)) << relay->output();
  auto entries = xrange_all(redis_, "expiry:stream");
  EXPECT_EQ(entries[0][entry_field::kPayload], "soon");
  EXPECT_LE(std::stoll(entries[0][entry_field::kFiredMs]) - moved["a"], 200);
}

TEST_F(RelayTest, ThreeRelaysForwardTenThousandTasksExactlyOnce) {
  std::vector<std::unique_ptr<ChildProcess>> relays;
  for (const char* name : {"r1", "r2", "r3"}) {
    relays.push_back(start_relay(server_, name));
    wait_relay_ready(redis_, name, *relays.back());
  }
  std::vector<Task> tasks;
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 10000; ++i) {
    // Spread over 2 s, with a burst of 3,000 due at the same delay.
    const long long delay = i < 3000 ? 1000 : (i * 7) % 2000;
    tasks.push_back({"task-" + std::to_string(i), delay, "payload-" + std::to_string(i)});
    expected[tasks.back().id] = tasks.back().payload;
  }
  schedule_all(redis_, tasks);
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= 10000; }, 30s))
      << "xlen=" << xlen(redis_) << " zcard=" << zcard(redis_);
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), expected);
  for (auto& r : relays) EXPECT_EQ(r->terminate(), 0) << r->output();
}

TEST_F(RelayTest, PipelinedSweepsOfThreeRelaysDrainABacklogExactlyOnce) {
  // Overdue before any relay starts: only sweeps forward them, 3 relays x 8 calls in flight,
  // 7 tasks per call, so many calls race for the same head of the schedule.
  std::vector<Task> tasks;
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 6000; ++i) {
    tasks.push_back({"late-" + std::to_string(i), 0, "p" + std::to_string(i)});
    expected[tasks.back().id] = tasks.back().payload;
  }
  schedule_all(redis_, tasks);
  std::vector<std::unique_ptr<ChildProcess>> relays;
  for (const char* name : {"r1", "r2", "r3"}) {
    relays.push_back(
        start_relay(server_, name, {"--sweep-pipeline", "8", "--sweep-batch", "7", "--event-claims=false"}));
  }
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= 6000; }, 30s))
      << "xlen=" << xlen(redis_) << " zcard=" << zcard(redis_);
  expect_exactly_once(xrange_all(redis_, "expiry:stream"), expected);
  for (auto& r : relays) EXPECT_EQ(r->terminate(), 0) << r->output();
}

TEST_F(RelayTest, EventsDuringADrainingSweepAreLeftToIt) {
  // 4,000 tasks due in the same millisecond, swept one per call: the drain outlasts the
  // triggers' 100 ms grace, so their expired events arrive while the sweep is draining. The
  // relay leaves them to the sweep instead of claiming each task a second time.
  const int port = free_port();
  auto relay = start_relay(server_, "r1",
                           {"--metrics-port", std::to_string(port), "--sweep-batch", "1", "--sweep-pipeline", "1"});
  wait_relay_ready(redis_, "r1", *relay);
  std::vector<Task> tasks;
  std::map<std::string, std::string> expected;
  // Lead time for pipelining 4,000 schedules: 1.5 s was too short once on a loaded CI machine.
  const long long due = redis_now_ms(redis_) + 5000;
  for (int i = 0; i < 4000; ++i) {
    tasks.push_back({"b" + std::to_string(i), 0, "p" + std::to_string(i)});
    expected[tasks.back().id] = tasks.back().payload;
  }
  KeyLayout keys("expiry");
  std::vector<std::vector<std::string>> cmds;
  for (const auto& t : tasks) cmds.push_back(schedule_argv(keys, t.id, ScheduleMode::At, due, t.payload));
  pipeline(redis_, cmds);
  ASSERT_LT(redis_now_ms(redis_), due) << "scheduling took longer than the lead time";
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= 4000; }, 30s))
      << "xlen=" << xlen(redis_) << " zcard=" << zcard(redis_);
  auto entries = xrange_all(redis_, "expiry:stream");
  expect_exactly_once(entries, expected);
  std::string text;
  ASSERT_TRUE(wait_until(
      [&] {
        text = http_get(port, "/metrics").body;
        return metric_value(text, R"(expiry_relay_tasks_forwarded_total{via="sweep"})") +
                   metric_value(text, R"(expiry_relay_tasks_forwarded_total{via="event"})") ==
               4000;
      },
      5s))
      << text;
  const double skipped = metric_value(text, "expiry_relay_events_to_draining_sweep_total");
  const double event_claims = metric_value(text, R"(expiry_relay_tasks_forwarded_total{via="event"})") +
                              metric_value(text, "expiry_relay_claims_lost_total");
  EXPECT_GT(skipped, 0) << text;
  EXPECT_LT(event_claims, skipped) << text;
  EXPECT_EQ(relay->terminate(), 0) << relay->output();
}

TEST_F(RelayTest, TasksFireOnTimeDespiteManyUnrelatedTtlKeys) {
  // 100,000 keys with long TTLs make Redis's expired events seconds late (active expiry
  // samples 20 keys per cycle); the relay's timer must not depend on them.
  std::vector<std::vector<std::string>> fill;
  for (int i = 0; i < 100000; ++i) {
    fill.push_back({"SET", "unrelated:" + std::to_string(i), "x", "EX", "3600"});
    if (fill.size() == 5000) {
      pipeline(redis_, fill);
      fill.clear();
    }
  }
  ASSERT_EQ(integer(redis_, {"DBSIZE"}), 100000);

  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  std::vector<Task> tasks;
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 2000; ++i) {
    tasks.push_back({"on-time-" + std::to_string(i), 500 + (i * 3) % 3000, std::to_string(i)});
    expected[tasks.back().id] = tasks.back().payload;
  }
  auto due = schedule_all(redis_, tasks);
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= 2000; }, 20s)) << relay->output();
  auto entries = xrange_all(redis_, "expiry:stream");
  expect_exactly_once(entries, expected);
  long long max_late = 0;
  for (auto& e : entries) {
    const long long late = std::stoll(e["fired_ms"]) - due[e["id"]];
    EXPECT_GE(late, 0) << e["id"];
    max_late = std::max(max_late, late);
  }
  EXPECT_LE(max_late, 1000) << "a task fired more than 1 s after its due time";
  RecordProperty("max_lateness_ms", static_cast<int>(max_late));
}

TEST_F(RelayTest, MissingShadowHashIsForwardedWithMarker) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  schedule_all(redis_, {{"ghost", 300, "will vanish"}});
  redis_.command({"DEL", "expiry:{0}:task:ghost"});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 5s)) << relay->output();
  auto entries = xrange_all(redis_, "expiry:stream");
  EXPECT_EQ(entries[0][entry_field::kId], "ghost");
  EXPECT_EQ(entries[0][entry_field::kMissingPayload], "absent");
  EXPECT_EQ(entries[0][entry_field::kPayload], "");
}

TEST_F(RelayTest, PerTaskStreamGetsTheGroupToo) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  redis_.command(load_library_argv());
  auto r = redis_.command(schedule_argv(KeyLayout("expiry"), "x1", ScheduleMode::Delay, 100, "p", "orders:stream"));
  ASSERT_FALSE(r.failed()) << r.describe();
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, "orders:stream") == 1; }, 5s)) << relay->output();
  auto groups = redis_.command({"XINFO", "GROUPS", "orders:stream"});
  ASSERT_EQ(groups.elements.size(), 1u);
  EXPECT_EQ(xlen(redis_), 0);
}

TEST_F(RelayTest, OtherNamespacesAndDatabasesAreIgnored) {
  auto relay = start_relay(server_, "r1");
  wait_relay_ready(redis_, "r1", *relay);
  // A task of another namespace stays pending: this relay neither sweeps nor claims it.
  auto other = schedule_all(redis_, {{"o1", 50, "other"}}, "billing");
  redis_.command({"SET", "expiry:{0}:t:not-a-task", "1", "PX", "20"});
  schedule_all(redis_, {{"mine", 300, "mine"}});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 1; }, 5s));
  EXPECT_EQ(zcard(redis_, "billing"), 1);
  EXPECT_EQ(xlen(redis_, "billing:stream"), 0);
  EXPECT_EQ(xrange_all(redis_, "expiry:stream")[0][entry_field::kId], "mine");
}

TEST_F(RelayTest, MetricsAndHealthEndpointsReportRealFigures) {
  const int port = free_port();
  auto relay = start_relay(server_, "r1", {"--metrics-port", std::to_string(port)});
  wait_relay_ready(redis_, "r1", *relay);
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/readyz").status == 200; }, 5s)) << relay->output();
  EXPECT_EQ(http_get(port, "/healthz").status, 200);
  std::vector<Task> tasks;
  for (int i = 0; i < 25; ++i) tasks.push_back({"m" + std::to_string(i), 100, "x"});
  tasks.push_back({"later", 600000, "x"});
  schedule_all(redis_, tasks);
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) == 25; }, 5s));
  std::string text;
  ASSERT_TRUE(wait_until(
      [&] {
        text = http_get(port, "/metrics").body;
        return metric_value(text, "expiry_relay_pending_tasks") == 1;
      },
      5s))
      << text;
  const double forwarded = metric_value(text, R"(expiry_relay_tasks_forwarded_total{via="sweep"})") +
                           metric_value(text, R"(expiry_relay_tasks_forwarded_total{via="event"})");
  EXPECT_EQ(forwarded, 25) << text;
  EXPECT_EQ(metric_value(text, "expiry_relay_lateness_seconds_count"), 25) << text;
  EXPECT_EQ(metric_value(text, "expiry_relay_overdue_tasks"), 0);
  EXPECT_EQ(metric_value(text, R"(expiry_relay_connected{connection="subscriber"})"), 1);
  EXPECT_GE(metric_value(text, "expiry_relay_sweep_batches_total"), 1);
  EXPECT_NE(text.find("# TYPE expiry_relay_lateness_seconds histogram"), std::string::npos);
  EXPECT_EQ(http_get(port, "/nope").status, 404);

  // After the subscriber is killed, readiness drops until it resubscribes, and the reconnect counts.
  redis_.command({"CLIENT", "KILL", "TYPE", "pubsub"});
  ASSERT_TRUE(wait_until(
      [&] {
        return metric_value(http_get(port, "/metrics").body, R"(expiry_relay_reconnects_total{connection="subscriber"})") ==
               1;
      },
      5s));
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/readyz").status == 200; }, 5s));
}

}  // namespace
}  // namespace expiry::test
