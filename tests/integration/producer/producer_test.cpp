// The Producer (src/producer/producer.h) against a real redis-server: every operation, on a
// namespace of one bucket and of several (so that routing, merging and the walks cover more
// than one bucket), with the outcomes read back from Redis itself. Each test has its own server.
#include "producer/producer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "producer/task_placement.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

constexpr const char* kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

Task task_in(const std::string& id, long long delay_ms, const std::string& payload = "p") {
  Task t;
  t.id = id;
  t.mode = ScheduleMode::Delay;
  t.ms = delay_ms;
  t.payload = payload;
  return t;
}

Task task_at(const std::string& id, long long at_ms) {
  Task t = task_in(id, 0);
  t.mode = ScheduleMode::At;
  t.ms = at_ms;
  return t;
}

class ProducerTest : public ::testing::Test {
 protected:
  // A Producer on this test's server, namespace "p" with `buckets` buckets (0: what Redis has).
  std::unique_ptr<Producer> producer(int buckets = 0, const ReplicaConfirmation& confirmation = {}) {
    std::map<std::string, std::string> settings = {{"redis_url", server_.url()}, {"namespace", "p"}};
    if (buckets > 0) settings["buckets"] = std::to_string(buckets);
    return std::make_unique<Producer>(settings, confirmation);
  }

  // The due time (ms) of `id` in its bucket's schedule per `placement`, or -1.
  long long due_of(const TaskPlacement& placement, const std::string& id) {
    const Reply r = redis_.command({"ZSCORE", placement.keys_of_task(id).schedule_key(), id});
    return r.type == Reply::Type::String ? std::stoll(r.str) : -1;
  }

  long long schedule_size(int buckets) {
    long long sum = 0;
    for (int b = 0; b < buckets; ++b) sum += integer(redis_, {"ZCARD", KeyLayout("p", b).schedule_key()});
    return sum;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(ProducerTest, SchedulesWithEveryOptionAndShowsWhatIsStored) {
  auto p = producer();
  Task t = task_in("order:1", 60000, "{\"n\":1}");
  t.stream = "orders:out";
  t.options.max_late_ms = 5000;
  t.options.traceparent = kTraceparent;
  const ScheduleResult scheduled = p->schedule(t);
  EXPECT_FALSE(scheduled.replaced);
  EXPECT_FALSE(scheduled.kept);

  const TaskDetails shown = p->show("order:1");
  ASSERT_TRUE(shown.pending);
  EXPECT_EQ(shown.due_ms, scheduled.due_ms);
  EXPECT_NEAR(shown.due_ms - shown.now_ms, 60000, 2000);
  EXPECT_EQ(shown.field("payload"), "{\"n\":1}");
  EXPECT_EQ(shown.field("max_late_ms"), "5000");
  EXPECT_EQ(shown.field("traceparent"), kTraceparent);
  EXPECT_EQ(shown.stream, "orders:out");
  EXPECT_FALSE(shown.default_stream);
  EXPECT_GT(shown.trigger_pttl_ms, 59000);
  EXPECT_EQ(due_of(p->placement(), "order:1"), scheduled.due_ms);

  const TaskDetails plain = (p->schedule(task_in("order:2", 1000)), p->show("order:2"));
  EXPECT_EQ(plain.stream, "p:stream");
  EXPECT_TRUE(plain.default_stream);
  EXPECT_FALSE(p->show("never").pending);
}

TEST_F(ProducerTest, IfAbsentKeepsAPendingTaskAndAReplacementSaysSo) {
  auto p = producer();
  const long long first = p->schedule(task_in("a", 60000)).due_ms;
  Task again = task_in("a", 120000, "other");
  again.options.if_absent = true;
  const ScheduleResult kept = p->schedule(again);
  EXPECT_TRUE(kept.kept);
  EXPECT_EQ(kept.due_ms, first);
  EXPECT_EQ(p->show("a").field("payload"), "p");
  const ScheduleResult replaced = p->schedule(task_in("a", 120000, "new"));
  EXPECT_TRUE(replaced.replaced);
  EXPECT_EQ(p->show("a").field("payload"), "new");

  Task debounced = task_in("d", 60000);
  debounced.options.debounce_max_ms = 90000;
  const long long bound = p->schedule(debounced).due_ms + 30000;  // 90 s after the first schedule
  debounced.ms = 600000;
  EXPECT_LE(p->schedule(debounced).due_ms, bound + 50);
}

TEST_F(ProducerTest, InvalidInputIsAConfigErrorAndWritesNothing) {
  auto p = producer();
  EXPECT_THROW(p->schedule(task_in("", 1)), ConfigError);
  EXPECT_THROW(p->schedule(task_in("a", -1)), ConfigError);
  Task bad_stream = task_in("a", 1);
  bad_stream.stream = "p:{0}:task:x";  // the library's own key space
  EXPECT_THROW(p->schedule(bad_stream), ConfigError);
  Task bad_options = task_in("a", 1);
  bad_options.options.if_absent = true;
  bad_options.options.debounce_max_ms = 5;
  EXPECT_THROW(p->schedule(bad_options), ConfigError);
  EXPECT_THROW(p->schedule_many({task_in("ok", 1), task_in("bad\n", 1)}), ConfigError);
  EXPECT_THROW(p->reschedule("a", ScheduleMode::At, 0), ConfigError);
  EXPECT_THROW(p->cancel_range(RangeFilter{}), ConfigError);
  RangeFilter after;
  after.after_ms = 5;
  EXPECT_THROW(p->run_now_range(after), ConfigError);
  ListQuery query;
  query.count = 0;
  EXPECT_THROW(p->list(query), ConfigError);
  query.count = 5;
  query.cursor = "not a cursor";
  EXPECT_THROW(p->list(query), ConfigError);
  EXPECT_EQ(schedule_size(1), 0);
}

TEST_F(ProducerTest, RescheduleMovesAPendingTaskKeepingItsPayloadAndCancelRemovesIt) {
  auto p = producer(4);
  p->schedule(task_in("job", 60000, "keep me"));
  const auto moved = p->reschedule("job", ScheduleMode::Delay, 300000);
  ASSERT_TRUE(moved.has_value());
  EXPECT_NEAR(moved->due_ms - moved->now_ms, 300000, 10);
  EXPECT_EQ(p->show("job").field("payload"), "keep me");
  EXPECT_EQ(due_of(p->placement(), "job"), moved->due_ms);
  EXPECT_TRUE(p->cancel("job"));
  EXPECT_FALSE(p->cancel("job"));
  EXPECT_FALSE(p->reschedule("job", ScheduleMode::Delay, 1).has_value());
  EXPECT_FALSE(p->show("job").pending);
  EXPECT_EQ(integer(redis_, {"EXISTS", p->placement().keys_of_task("job").shadow_key("job")}), 0);
}

TEST_F(ProducerTest, EveryTaskLandsInTheBucketThePlacementNames) {
  auto p = producer(8);
  EXPECT_EQ(p->buckets(), 8);
  EXPECT_FALSE(p->cluster());
  EXPECT_EQ(redis_.command({"GET", "p:buckets"}).str, "8");
  std::set<int> buckets;
  for (int i = 0; i < 64; ++i) {
    const std::string id = "t" + std::to_string(i);
    const long long due = p->schedule(task_in(id, 60000 + i)).due_ms;
    EXPECT_EQ(due_of(p->placement(), id), due) << id;
    buckets.insert(p->placement().bucket_of_task(id));
  }
  EXPECT_EQ(buckets.size(), 8u);  // 64 ids spread over every bucket
  EXPECT_EQ(schedule_size(8), 64);
  // A second Producer takes the count Redis holds; a contradicting one is refused.
  EXPECT_EQ(producer()->buckets(), 8);
  EXPECT_THROW(producer(4), ConfigError);
}

TEST_F(ProducerTest, ScheduleManyWritesEveryTaskAndAnswersInInputOrder) {
  auto p = producer(4);
  std::vector<Task> tasks;
  const long long base = p->now_ms() + 3600000;
  for (int i = 0; i < 1000; ++i) tasks.push_back(task_at("many:" + std::to_string(i), base + (i * 7919) % 1000));
  tasks.push_back(task_at("many:0", base + 5));  // the same id again: the later one wins
  const std::vector<ScheduleResult> results = p->schedule_many(tasks);
  ASSERT_EQ(results.size(), tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) EXPECT_EQ(results[i].due_ms, tasks[i].ms) << i;
  EXPECT_TRUE(results.back().replaced);
  EXPECT_EQ(schedule_size(4), 1000);
  EXPECT_EQ(due_of(p->placement(), "many:0"), base + 5);
}

TEST_F(ProducerTest, ScheduleManyRefusedSaysWhichTaskAndHowManyWereWritten) {
  auto p = producer(4);
  // A task of bucket 0 and one of another bucket, whose schedule key is not a sorted set.
  std::string good, bad;
  for (int i = 0; good.empty() || bad.empty(); ++i) {
    const std::string id = "r" + std::to_string(i);
    (p->placement().bucket_of_task(id) == 0 ? good : bad) = id;
  }
  redis_.command({"SET", p->placement().keys_of_task(bad).schedule_key(), "not a sorted set"});
  try {
    p->schedule_many({task_in(good, 1000), task_in(bad, 1000)});
    FAIL() << "schedule_many wrote into a string";
  } catch (const ReplyError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("task #2 (id '" + bad + "') was refused"), std::string::npos) << what;
    EXPECT_NE(what.find("1 of 2 tasks were written"), std::string::npos) << what;
  }
  EXPECT_TRUE(p->show(good).pending);
}

// A feed of `count` tasks that reports itself stopped once `stop_after` were handed out.
class CountingFeed : public ScheduleFeed {
 public:
  CountingFeed(size_t count, size_t stop_after) : count_(count), stop_after_(stop_after) {}
  std::optional<Task> next() override {
    if (handed_ == count_) return std::nullopt;
    return task_in("feed:" + std::to_string(handed_++), 60000);
  }
  bool stopped() override { return handed_ >= stop_after_; }
  void on_answer(const ScheduleAnswer& answer) override {
    ASSERT_TRUE(answer.written()) << answer.text;
    for (size_t n : answer.tasks) answered.insert(n);
  }
  void on_round_trip() override { ++round_trips; }

  std::set<size_t> answered;
  int round_trips = 0;

 private:
  size_t count_;
  size_t stop_after_;
  size_t handed_ = 0;
};

TEST_F(ProducerTest, AStoppedFeedStillSendsWhatItHandedOutAndNothingMore) {
  auto p = producer(4);
  CountingFeed all(2000, SIZE_MAX);
  p->schedule_stream(all);
  EXPECT_EQ(all.answered.size(), 2000u);
  EXPECT_GT(all.round_trips, 0);
  EXPECT_EQ(schedule_size(4), 2000);

  redis_.command({"FLUSHALL"});
  redis_.command({"SET", "p:buckets", "4"});  // the count the library checks every task's bucket against
  CountingFeed stopped(2000, 300);
  p->schedule_stream(stopped);
  EXPECT_EQ(stopped.answered.size(), 300u);
  EXPECT_EQ(*stopped.answered.rbegin(), 299u);  // the first 300 tasks, every one
  EXPECT_EQ(schedule_size(4), 300);
}

TEST_F(ProducerTest, ListPagesEveryBucketInDueOrderAndReadsTheDetails) {
  auto p = producer(4);
  const long long base = p->now_ms() + 3600000;
  std::vector<std::string> expected;
  for (int i = 0; i < 57; ++i) {
    const std::string id = "l" + std::to_string(i);
    Task t = task_at(id, base + (i * 13) % 57);
    if (i == 3) t.stream = "own:stream";
    p->schedule(t);
  }
  ListQuery query;
  query.count = 10;
  std::vector<ListedTask> listed;
  int pages = 0;
  while (true) {
    const TaskPage page = p->list(query);
    ++pages;
    listed.insert(listed.end(), page.tasks.begin(), page.tasks.end());
    if (!page.next_cursor) break;
    query.cursor = *page.next_cursor;
  }
  EXPECT_EQ(pages, 6);
  ASSERT_EQ(listed.size(), 57u);
  std::set<int> buckets;
  for (size_t i = 0; i < listed.size(); ++i) {
    ASSERT_TRUE(listed[i].due_ms.has_value());
    EXPECT_EQ(*listed[i].due_ms, base + static_cast<long long>(i)) << listed[i].id;
    EXPECT_EQ(listed[i].bucket, p->placement().bucket_of_task(listed[i].id));
    buckets.insert(listed[i].bucket);
  }
  EXPECT_EQ(buckets.size(), 4u);

  ListQuery before;
  before.due_before_ms = base + 5;
  EXPECT_EQ(p->list(before).tasks.size(), 5u);

  std::vector<ListedTaskDetails> details(listed.size());
  p->list_details(listed, 2, [&](size_t i, const ListedTaskDetails& d) { details[i] = d; });
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(details[i].payload_bytes, 1);
    EXPECT_EQ(details[i].payload_head, "p");
    const bool own = listed[i].id == "l3";
    EXPECT_EQ(details[i].default_stream, !own) << listed[i].id;
    EXPECT_EQ(details[i].stream, own ? "own:stream" : KeyLayout("p", listed[i].bucket).bucket_stream());
  }
}

TEST_F(ProducerTest, RangeWalksCoverEveryBucketAndRunNowMakesTasksDue) {
  auto p = producer(4);
  for (int i = 0; i < 40; ++i) p->schedule(task_in((i % 2 ? "keep:" : "drop:") + std::to_string(i), 600000));
  RangeFilter drop;
  drop.prefix = "drop:";
  std::vector<RangeProgress> progress;
  const RangeTotals cancelled = p->cancel_range(drop, [&](const RangeProgress& r) { progress.push_back(r); });
  EXPECT_EQ(cancelled.acted, 20);
  EXPECT_EQ(schedule_size(4), 20);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().bucket, 3);
  EXPECT_EQ(progress.back().buckets, 4);
  EXPECT_EQ(progress.back().so_far.acted, 20);

  const RunNowResult one = p->run_now("keep:1");
  ASSERT_TRUE(one.pending);
  EXPECT_LT(one.due_ms, one.previous_due_ms);
  EXPECT_FALSE(p->run_now("drop:0").pending);
  RangeFilter keep;
  keep.prefix = "keep:";
  keep.before_ms = p->now_ms() + 3600000;
  EXPECT_EQ(p->run_now_range(keep).acted, 19);  // keep:1 is due already
  const long long now = p->now_ms();
  for (int i = 1; i < 40; i += 2) EXPECT_LE(due_of(p->placement(), "keep:" + std::to_string(i)), now);
}

TEST_F(ProducerTest, PauseHoldsEveryBucketUntilResumed) {
  auto p = producer(4);
  p->schedule(task_in("held", 0));
  const PauseResult paused = p->pause(0ms);
  EXPECT_EQ(paused.value, 0);  // until resumed
  EXPECT_EQ(paused.pending, 1);
  for (int b = 0; b < 4; ++b) EXPECT_EQ(integer(redis_, {"EXISTS", p->placement().paused_key_of_bucket(b)}), 1);
  const PauseResult timed = p->pause(60s);
  EXPECT_GT(timed.value, p->now_ms());
  const PauseResult resumed = p->resume();
  EXPECT_EQ(resumed.value, 4);  // buckets that were paused
  for (int b = 0; b < 4; ++b) EXPECT_EQ(integer(redis_, {"EXISTS", p->placement().paused_key_of_bucket(b)}), 0);
  EXPECT_THROW(p->pause(-1ms), ConfigError);
}

TEST_F(ProducerTest, ConfirmationWaitsForTheReplicasAskedForAndReportsAShortfall) {
  int rewrites = 0;
  const auto write_again = [&] { ++rewrites; };
  EXPECT_EQ(producer()->confirm_writes(write_again).wanted, 0);  // nothing asked for: no WAIT

  ReplicaConfirmation one;
  one.replicas = 1;
  one.timeout = 100ms;
  auto p = producer(0, one);
  p->schedule(task_in("w", 1000));
  const auto start = std::chrono::steady_clock::now();
  const ReplicaAcks acks = p->confirm_writes(write_again);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 90ms);  // WAIT 1 100 ran its course
  EXPECT_EQ(acks.wanted, 1);
  EXPECT_EQ(acks.acknowledged, 0);
  EXPECT_FALSE(acks.confirmed());
  EXPECT_EQ(acks.writes, 1);
  EXPECT_EQ(rewrites, 0);  // without Sentinel a shortfall is only reported

  ReplicaConfirmation automatic;
  automatic.automatic = true;
  EXPECT_TRUE(producer(0, automatic)->confirm_writes(write_again).confirmed());  // no sentinels: none to wait for
}

TEST_F(ProducerTest, ABadSettingIsAConfigErrorNamingIt) {
  try {
    Producer p({{"redis_url", server_.url()}, {"buckets", "3"}});
    FAIL() << "3 buckets accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--buckets"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Producer({{"redis_url", "redis://127.0.0.1:1/0"}}), IoError);
}

}  // namespace
}  // namespace expiry::test
