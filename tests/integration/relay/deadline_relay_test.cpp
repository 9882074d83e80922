// expiry-relay and the deadline features of the library, against a real redis-server: the
// lateness limit (--max-late-ms, a task's own max_late_ms) sends each late task to the dead
// stream and every other one to its stream, exactly once, also under two racing relays; a pause
// holds every task across relay restarts and a resume (or the end of a timed pause) forwards
// them once, in due order, with their true lateness; run-now; traceparent to the canceller.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/ctl/ctl_run.h"
#include "integration/relay/relay_harness.h"
#include "orders/orders_library.h"
#include "redis/hash_slot.h"

namespace expiry::test {
namespace {

const std::string kStream = "expiry:stream";
const std::string kDead = "expiry:stream:dead";
const KeyLayout kKeys("expiry");

class DeadlineRelayTest : public ::testing::Test {
 protected:
  void SetUp() override { redis_.command(load_library_argv()); }

  // A relay with /metrics, started and ready.
  std::unique_ptr<ChildProcess> relay(const std::string& instance, std::vector<std::string> extra = {}) {
    metrics_port_[instance] = free_port();
    extra.insert(extra.end(), {"--metrics-port", std::to_string(metrics_port_[instance])});
    auto r = start_relay(server_, instance, extra);
    wait_relay_ready(redis_, instance, *r);
    return r;
  }

  // The value of `series` on relay `instance`'s /metrics (-1 if absent or unreachable).
  double metric(const std::string& instance, const std::string& series) {
    const HttpResponse r = http_get(metrics_port_.at(instance), "/metrics");
    return r.status == 200 ? metric_value(r.body, series) : -1;
  }
  double dead_lettered_late(const std::string& instance) {
    return metric(instance, R"(expiry_relay_tasks_dead_lettered_late_total{via="event"})") +
           metric(instance, R"(expiry_relay_tasks_dead_lettered_late_total{via="sweep"})");
  }

  // Schedules `id` `delay_ms` from now with schedule options `options`; returns its due time.
  long long schedule(const std::string& id, long long delay_ms, const std::string& payload,
                     const std::string& options = "", const std::string& stream = "") {
    const Reply r =
        redis_.command(schedule_argv(kKeys, id, ScheduleMode::Delay, delay_ms, payload, stream, std::nullopt, options));
    EXPECT_FALSE(r.failed()) << r.describe();
    return r.failed() ? -1 : r.elements.at(0).integer;
  }

  // Waits until the Redis clock has passed `ms`.
  void wait_redis_clock_past(long long ms) {
    ASSERT_TRUE(wait_until([&] { return redis_now_ms(redis_) > ms; }, 60s));
  }

  Entries entries(const std::string& stream) { return xrange_all(redis_, stream); }

  static std::set<std::string> ids_of(const Entries& es) {
    std::set<std::string> ids;
    for (const auto& e : es) ids.insert(e.at(entry_field::kId));
    return ids;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  std::map<std::string, int> metrics_port_;
};

// ---------------------------------------------------------------- lateness limit

TEST_F(DeadlineRelayTest, TasksHeldByAnOutageEndInTheDeadStreamWhenLaterThanTheLimitElseInTheStream) {
  constexpr long long kLimit = 1000;
  auto r1 = relay("r1", {"--max-late-ms", std::to_string(kLimit)});
  ASSERT_EQ(r1->terminate(), 0);  // the outage

  std::map<std::string, std::string> late;
  std::map<std::string, std::string> on_time;
  long long latest_late_due = 0;
  for (int i = 0; i < 5; ++i) {
    const std::string id = "late-" + std::to_string(i);
    late[id] = "payload of " + id + " \xC3\xA9";
    latest_late_due = std::max(latest_late_due, schedule(id, 50, late[id]));
  }
  // A limit of its own wins over the relay's: this one fires however late.
  on_time["patient"] = "p";
  schedule("patient", 50, "p", "max_late_ms=600000");
  for (int i = 0; i < 5; ++i) {
    const std::string id = "on-time-" + std::to_string(i);
    on_time[id] = "payload of " + id;
    schedule(id, 5000, on_time[id]);
  }
  wait_redis_clock_past(latest_late_due + kLimit + 200);

  auto r2 = relay("r2", {"--max-late-ms", std::to_string(kLimit)});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) + xlen(redis_, kDead) == 11; }, 30s)) << r2->output();
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0; }, 10s));

  const Entries dead = entries(kDead);
  ASSERT_EQ(dead.size(), late.size());
  for (const auto& e : dead) {
    const std::string& id = e.at(entry_field::kId);
    ASSERT_TRUE(late.count(id)) << "dead-lettered: " << id;
    EXPECT_EQ(e.at(entry_field::kReason), "late");
    EXPECT_EQ(e.at(entry_field::kPayload), late[id]);
    EXPECT_EQ(e.at(entry_field::kOriginalStream), kStream);
    EXPECT_EQ(e.at("max_late_ms"), std::to_string(kLimit));
    EXPECT_GT(std::stoll(e.at("late_ms")), kLimit) << id;
  }
  const Entries forwarded = entries(kStream);
  expect_exactly_once(forwarded, on_time);
  for (const auto& id : ids_of(forwarded)) EXPECT_FALSE(late.count(id)) << id << " is in both streams";
  ASSERT_TRUE(wait_until([&] { return dead_lettered_late("r2") == 5; }, 10s)) << dead_lettered_late("r2");

  // expiry-ctl lists the late entry and replays it: it is scheduled again and fires on time.
  const CtlRun list = run_ctl({"dead", "list", "--redis-url=" + server_.url()});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_TRUE(contains(list.output, "task=late-0")) << list.output;
  EXPECT_TRUE(contains(list.output, "reason=late")) << list.output;
  const std::string entry = dead.front().at("_entry_id");
  const std::string replayed_id = dead.front().at(entry_field::kId);
  const CtlRun replay = run_ctl({"dead", "replay", entry, "--redis-url=" + server_.url()});
  ASSERT_EQ(replay.exit_code, 0) << replay.output;
  ASSERT_TRUE(wait_until([&] { return ids_of(entries(kStream)).count(replayed_id) == 1; }, 15s)) << r2->output();
  for (const auto& e : entries(kStream)) {
    if (e.at(entry_field::kId) == replayed_id) EXPECT_EQ(e.at(entry_field::kPayload), late[replayed_id]);
  }
}

TEST_F(DeadlineRelayTest, ATaskLimitOfItsOwnAppliesWhenTheRelayHasNone) {
  auto r1 = relay("r1");
  ASSERT_EQ(r1->terminate(), 0);
  const long long due = schedule("strict", 50, "s", "max_late_ms=200");
  schedule("lenient", 50, "l");
  wait_redis_clock_past(due + 700);
  auto r2 = relay("r2");
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) == 1 && xlen(redis_, kDead) == 1; }, 30s))
      << r2->output();
  const Entries dead = entries(kDead);
  EXPECT_EQ(dead.at(0).at(entry_field::kId), "strict");
  EXPECT_EQ(dead.at(0).at(entry_field::kReason), "late");
  EXPECT_EQ(dead.at(0).at("max_late_ms"), "200");
  EXPECT_EQ(entries(kStream).at(0).at(entry_field::kId), "lenient");
}

// --dead-stream means what it says for the default stream: late tasks land there (they went to
// expiry:stream:dead while the relay said my:dead), and when it holds another type the late task
// stays pending rather than being dead-lettered elsewhere.
TEST_F(DeadlineRelayTest, TheDeadStreamFlagTakesTheDefaultStreamsLateTasks) {
  auto r1 = relay("r1", {"--max-late-ms", "200", "--dead-stream", "my:dead"});
  ASSERT_EQ(r1->terminate(), 0);
  const long long due = schedule("stale", 50, "s");
  wait_redis_clock_past(due + 700);
  auto r2 = relay("r2", {"--max-late-ms", "200", "--dead-stream", "my:dead"});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, "my:dead") == 1; }, 30s)) << r2->output();
  EXPECT_EQ(entries("my:dead").at(0).at(entry_field::kId), "stale");
  EXPECT_EQ(integer(redis_, {"EXISTS", kDead}), 0) << "a late task went to " << kDead;
  EXPECT_EQ(xlen(redis_, kStream), 0);
  ASSERT_EQ(r2->terminate(), 0);

  ASSERT_EQ(redis_.command({"SET", "bad:dead", "not a stream"}).str, "OK");
  const long long due2 = schedule("kept", 50, "k");
  wait_redis_clock_past(due2 + 700);
  auto r3 = relay("r3", {"--max-late-ms", "200", "--dead-stream", "bad:dead"});
  ASSERT_TRUE(wait_until([&] { return r3->output().find("bad:dead") != std::string::npos; }, 30s)) << r3->output();
  EXPECT_EQ(zcard(redis_), 1) << "the late task left the schedule";
  EXPECT_EQ(xlen(redis_, "my:dead"), 1);
  EXPECT_EQ(integer(redis_, {"EXISTS", kDead}), 0);
  EXPECT_EQ(xlen(redis_, kStream), 0);
}

// With bucket streams, each bucket's late tasks go to the bucket's own NS:{B}:dead (where the
// consumers of that bucket look), whatever --dead-stream says; a pause holds one bucket only.
TEST_F(DeadlineRelayTest, BucketStreamsDeadLetterIntoTheBucketsOwnDeadStream) {
  constexpr int kBuckets = 4;
  const std::vector<std::string> args = {"--buckets", std::to_string(kBuckets), "--max-late-ms", "500",
                                         "--dead-stream", "elsewhere:dead"};
  const auto subscribed = [&](const std::string& instance) {
    auto numsub = redis_.command({"PUBSUB", "NUMSUB", kKeys.health_channel(instance)});
    return numsub.elements.size() == 2 && numsub.elements[1].integer == 1;
  };
  // Records the count and creates the groups (beside its subscription, not before it: wait for both).
  const auto prepared = [&] {
    if (!subscribed("warm") || redis_.command({"GET", kKeys.buckets_key()}).str != std::to_string(kBuckets)) return false;
    for (int b = 0; b < kBuckets; ++b) {
      if (redis_.command({"XINFO", "GROUPS", KeyLayout("expiry", b).bucket_stream()}).failed()) return false;
    }
    return true;
  };
  auto warm = start_relay(server_, "warm", args);
  ASSERT_TRUE(wait_until(prepared, 20s)) << warm->output();
  ASSERT_EQ(warm->terminate(), 0);
  long long last_due = 0;
  std::map<int, int> per_bucket;
  for (int i = 0; i < 40; ++i) {
    const std::string id = "b-" + std::to_string(i);
    const int b = bucket_of(id, kBuckets);
    ++per_bucket[b];
    const Reply r = redis_.command(schedule_argv(KeyLayout("expiry", b), id, ScheduleMode::Delay, 50, "pb"));
    ASSERT_FALSE(r.failed()) << r.describe();
    last_due = std::max(last_due, r.elements.at(0).integer);
  }
  wait_redis_clock_past(last_due + 800);
  metrics_port_["b"] = free_port();
  std::vector<std::string> with_metrics = args;
  with_metrics.insert(with_metrics.end(), {"--metrics-port", std::to_string(metrics_port_["b"])});
  auto relay = start_relay(server_, "b", with_metrics);
  ASSERT_TRUE(wait_until([&] { return dead_lettered_late("b") == 40; }, 30s)) << relay->output();
  for (int b = 0; b < kBuckets; ++b) {
    const KeyLayout keys("expiry", b);
    EXPECT_EQ(xlen(redis_, keys.bucket_dead_stream()), per_bucket[b]) << "bucket " << b;
    EXPECT_EQ(xlen(redis_, keys.bucket_stream()), 0) << "bucket " << b;
    for (const auto& e : entries(keys.bucket_dead_stream())) {
      EXPECT_EQ(bucket_of(e.at(entry_field::kId), kBuckets), b);
      EXPECT_EQ(e.at(entry_field::kReason), "late");
    }
  }
  EXPECT_EQ(xlen(redis_, "elsewhere:dead"), 0);

  ASSERT_FALSE(redis_.command(pause_argv(KeyLayout("expiry", 1), 0)).failed());
  const Reply r = redis_.command(schedule_argv(KeyLayout("expiry", 1), "x", ScheduleMode::Delay, 0, "x"));
  ASSERT_FALSE(r.failed()) << r.describe();
  ASSERT_TRUE(wait_until([&] { return metric("b", "expiry_relay_bucket_paused") == 1; }, 30s)) << relay->output();
}

// Two relays with a limit race events and sweeps over tasks falling due while they start:
// each task is in exactly one of the two streams, once.
TEST_F(DeadlineRelayTest, RacingRelaysPutEachTaskInExactlyOneStreamOnce) {
  constexpr int kTasks = 2000;
  const std::vector<std::string> args = {"--max-late-ms", "400", "--sweep-batch", "20", "--sweep-interval-ms", "100"};
  auto warm = relay("warm", args);  // creates the group
  ASSERT_EQ(warm->terminate(), 0);
  std::vector<Task> tasks;
  std::map<std::string, std::string> payloads;
  for (int i = 0; i < kTasks; ++i) {
    const std::string id = "race-" + std::to_string(i);
    tasks.push_back({id, 1 + (i % 100) * 25, "payload-" + std::to_string(i)});  // due over 2.5 s
    payloads[id] = tasks.back().payload;
  }
  schedule_all(redis_, tasks);
  const long long first_due = redis_now_ms(redis_);
  wait_redis_clock_past(first_due + 1200);  // about half of them later than the limit
  auto a = start_relay(server_, "a", args);
  auto b = start_relay(server_, "b", args);
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0; }, 60s)) << a->output() << b->output();

  Entries all = entries(kStream);
  const Entries dead = entries(kDead);
  const std::set<std::string> forwarded_ids = ids_of(all);
  for (const auto& e : dead) {
    EXPECT_EQ(e.at(entry_field::kReason), "late");
    EXPECT_FALSE(forwarded_ids.count(e.at(entry_field::kId))) << e.at(entry_field::kId) << " is in both streams";
  }
  all.insert(all.end(), dead.begin(), dead.end());
  expect_exactly_once(all, payloads);
  EXPECT_GT(dead.size(), 0u);
  EXPECT_GT(forwarded_ids.size(), 0u);
}

// ---------------------------------------------------------------- pause and resume

TEST_F(DeadlineRelayTest, APauseHoldsEveryTaskAcrossARestartAndTheResumeForwardsThemOnceInDueOrder) {
  constexpr int kTasks = 200;
  const std::vector<std::string> args = {"--sweep-interval-ms", "300"};
  auto r1 = relay("r1", args);
  const Reply paused = redis_.command(pause_argv(kKeys, 0));
  ASSERT_FALSE(paused.failed()) << paused.describe();

  std::vector<Task> tasks;
  std::map<std::string, std::string> payloads;
  for (int i = 0; i < kTasks; ++i) {
    const std::string id = "held-" + std::to_string(i);
    tasks.push_back({id, 100 + 3 * i, "payload-" + std::to_string(i)});
    payloads[id] = tasks.back().payload;
  }
  auto due = schedule_all(redis_, tasks);
  long long last_due = 0;
  for (const auto& [id, ms] : due) last_due = std::max(last_due, ms);
  wait_redis_clock_past(last_due);
  ASSERT_TRUE(wait_until([&] {
    return metric("r1", "expiry_relay_overdue_tasks") == kTasks && metric("r1", "expiry_relay_bucket_paused") == 1;
  }, 20s)) << metric("r1", "expiry_relay_overdue_tasks") << "\n" << r1->output();
  EXPECT_EQ(xlen(redis_, kStream), 0);

  // The pause lives in Redis: a relay started meanwhile holds the tasks too.
  ASSERT_EQ(r1->terminate(), 0);
  auto r2 = relay("r2", args);
  ASSERT_TRUE(wait_until([&] {
    return metric("r2", "expiry_relay_overdue_tasks") == kTasks && metric("r2", "expiry_relay_bucket_paused") == 1;
  }, 20s)) << r2->output();
  EXPECT_EQ(xlen(redis_, kStream), 0);
  EXPECT_EQ(zcard(redis_), kTasks);

  const long long resumed_at = redis_now_ms(redis_);
  const Reply resumed = redis_.command(resume_argv(kKeys));
  ASSERT_FALSE(resumed.failed()) << resumed.describe();
  EXPECT_EQ(resumed.elements.at(0).integer, 1);
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) == kTasks; }, 20s)) << r2->output();

  const Entries forwarded = entries(kStream);
  expect_exactly_once(forwarded, payloads);
  long long previous_due = 0;
  for (const auto& e : forwarded) {
    const long long d = std::stoll(e.at(entry_field::kDueMs));
    const long long fired = std::stoll(e.at(entry_field::kFiredMs));
    EXPECT_GE(d, previous_due) << "entries out of due order at " << e.at(entry_field::kId);
    previous_due = d;
    EXPECT_EQ(d, due[e.at(entry_field::kId)]);
    EXPECT_GE(fired, resumed_at) << e.at(entry_field::kId) << " left during the pause";
    EXPECT_GE(fired - d, resumed_at - due[e.at(entry_field::kId)]) << "lateness hides the pause";
  }
  ASSERT_TRUE(wait_until([&] { return metric("r2", "expiry_relay_bucket_paused") == 0; }, 10s));
  EXPECT_TRUE(wait_until([&] { return metric("r2", "expiry_relay_overdue_tasks") == 0; }, 10s));
}

// With a sweep period of a minute, only the resume's wake message can forward the held tasks
// within seconds: the relay sweeps for a wake whose due time has passed even though its timer
// was armed for later by the paused sweep.
TEST_F(DeadlineRelayTest, TheResumeWakesTheRelayAtOnce) {
  auto r1 = relay("r1", {"--sweep-interval-ms", "60000"});
  ASSERT_FALSE(redis_.command(pause_argv(kKeys, 0)).failed());
  long long last_due = 0;
  for (int i = 0; i < 20; ++i) last_due = std::max(last_due, schedule("w-" + std::to_string(i), 50, "w"));
  wait_redis_clock_past(last_due + 300);
  ASSERT_TRUE(wait_until([&] { return metric("r1", "expiry_relay_bucket_paused") == 1; }, 10s)) << r1->output();
  // A paused bucket does not spin: its sweep waits for the period (or a wake).
  const double batches = metric("r1", "expiry_relay_sweep_batches_total");
  wait_redis_clock_past(redis_now_ms(redis_) + 1000);
  EXPECT_LE(metric("r1", "expiry_relay_sweep_batches_total") - batches, 2);
  EXPECT_EQ(xlen(redis_, kStream), 0);
  const long long resumed_at = redis_now_ms(redis_);
  ASSERT_FALSE(redis_.command(resume_argv(kKeys)).failed());
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) == 20; }, 30s)) << r1->output();
  for (const auto& e : entries(kStream)) EXPECT_LT(std::stoll(e.at(entry_field::kFiredMs)) - resumed_at, 30000);
}

TEST_F(DeadlineRelayTest, HeldTasksLaterThanTheLimitAreDeadLetteredOnResume) {
  constexpr long long kLimit = 3000;
  auto r1 = relay("r1", {"--max-late-ms", std::to_string(kLimit), "--sweep-interval-ms", "300"});
  ASSERT_FALSE(redis_.command(pause_argv(kKeys, 0)).failed());
  long long old_due = 0;
  for (int i = 0; i < 10; ++i) old_due = std::max(old_due, schedule("old-" + std::to_string(i), 50, "o"));
  wait_redis_clock_past(old_due + kLimit + 300);
  long long fresh_due = 0;
  for (int i = 0; i < 10; ++i) fresh_due = std::max(fresh_due, schedule("fresh-" + std::to_string(i), 50, "f"));
  wait_redis_clock_past(fresh_due);
  EXPECT_EQ(xlen(redis_, kStream) + xlen(redis_, kDead), 0);
  ASSERT_FALSE(redis_.command(resume_argv(kKeys)).failed());
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) + xlen(redis_, kDead) == 20; }, 20s)) << r1->output();
  for (const auto& id : ids_of(entries(kDead))) EXPECT_EQ(id.rfind("old-", 0), 0u) << id;
  for (const auto& id : ids_of(entries(kStream))) EXPECT_EQ(id.rfind("fresh-", 0), 0u) << id;
  EXPECT_EQ(xlen(redis_, kDead), 10);
  ASSERT_TRUE(wait_until([&] { return dead_lettered_late("r1") == 10; }, 10s));
}

TEST_F(DeadlineRelayTest, ATimedPauseEndsByItself) {
  auto r1 = relay("r1");
  const Reply paused = redis_.command(pause_argv(kKeys, 1500));
  ASSERT_FALSE(paused.failed()) << paused.describe();
  const long long until = paused.elements.at(0).integer;
  std::map<std::string, std::string> payloads;
  for (int i = 0; i < 20; ++i) {
    const std::string id = "timed-" + std::to_string(i);
    payloads[id] = "t" + std::to_string(i);
    schedule(id, 100, payloads[id]);
  }
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) == 20; }, 20s)) << r1->output();
  const Entries forwarded = entries(kStream);
  expect_exactly_once(forwarded, payloads);
  for (const auto& e : forwarded) EXPECT_GE(std::stoll(e.at(entry_field::kFiredMs)), until) << e.at(entry_field::kId);
}

// ---------------------------------------------------------------- run now and trace context

TEST_F(DeadlineRelayTest, RunNowForwardsAPendingTaskAtOnceAndSaysItWasPromoted) {
  auto r1 = relay("r1");
  const long long due = schedule("in-an-hour", 3600000, "keep me", "");
  const Reply r = redis_.command(run_now_argv(kKeys, "in-an-hour"));
  ASSERT_FALSE(r.failed()) << r.describe();
  ASSERT_EQ(r.elements.at(0).integer, 1);
  ASSERT_TRUE(wait_until([&] { return xlen(redis_, kStream) == 1; }, 5s)) << r1->output();
  const auto e = entries(kStream).at(0);
  EXPECT_EQ(e.at(entry_field::kId), "in-an-hour");
  EXPECT_EQ(e.at(entry_field::kPayload), "keep me");
  EXPECT_EQ(e.at("promoted_from_ms"), std::to_string(due));
  EXPECT_TRUE(e.count("promoted_ms"));
}

TEST_F(DeadlineRelayTest, TheTraceparentReachesTheStreamEntryAndTheCancellersLog) {
  const std::string tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  redis_.command({"XGROUP", "CREATE", kOrderTimeoutStream, "workers", "0", "MKSTREAM"});
  redis_.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
  redis_.command({"HSET", "order:tp1", "status", "pending"});
  auto r1 = relay("r1");
  auto canceller = std::make_unique<ChildProcess>(
      ORDER_CANCELLER_BIN,
      std::vector<std::string>{"--redis-url", server_.url(), "--consumer", "c1", "--block-ms", "200"},
      std::vector<std::pair<std::string, std::string>>{}, server_.dir() + "/canceller.log");
  schedule("order:tp1", 100, nlohmann::json{{"order_id", "tp1"}}.dump(), "traceparent=" + tp, kOrderTimeoutStream);
  ASSERT_TRUE(wait_until([&] { return redis_.command({"HGET", "order:tp1", "status"}).str == "cancelled"; }, 15s))
      << canceller->output();
  EXPECT_EQ(entries(kOrderTimeoutStream).at(0).at("traceparent"), tp);
  ASSERT_TRUE(wait_until([&] { return contains(canceller->output(), "traceparent=" + tp); }, 5s))
      << canceller->output();
  EXPECT_TRUE(contains(canceller->output(), "cancelled order:tp1")) << canceller->output();
}

}  // namespace
}  // namespace expiry::test
