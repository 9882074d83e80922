// The Inspector (src/inspector/inspector.h) against a real redis-server: namespace stats per
// bucket and in total (schedules, pause flags, streams and a consumer group), dead letters read,
// replayed and purged, a bounded range step and the audit trail, each checked against what
// the test wrote to Redis. Each test has its own server.
#include "inspector/inspector.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "producer/producer.h"
#include "producer/task.h"
#include "producer/task_placement.h"
#include "support/redis_client.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

class InspectorTest : public ::testing::Test {
 protected:
  // A Producer on this test's server, namespace "i" with `buckets` buckets.
  std::unique_ptr<Producer> producer(int buckets) {
    return std::make_unique<Producer>(std::map<std::string, std::string>{
        {"redis_url", server_.url()}, {"namespace", "i"}, {"buckets", std::to_string(buckets)}});
  }

  static Task due_at(const std::string& id, long long due_ms) {
    Task t;
    t.id = id;
    t.mode = ScheduleMode::At;
    t.ms = due_ms;
    return t;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(InspectorTest, StatsOfAnEmptyNamespaceListEveryBucketWithNothingPending) {
  auto p = producer(4);
  const NamespaceStats st = Inspector(*p).stats();
  ASSERT_EQ(st.buckets.size(), 4u);
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(st.buckets[static_cast<size_t>(b)].bucket, b);
    EXPECT_EQ(st.buckets[static_cast<size_t>(b)].pending, 0);
    EXPECT_FALSE(st.buckets[static_cast<size_t>(b)].next_due_ms.has_value());
    EXPECT_FALSE(st.buckets[static_cast<size_t>(b)].paused_until.has_value());
  }
  EXPECT_EQ(st.pending, 0);
  EXPECT_EQ(st.overdue, 0);
  EXPECT_FALSE(st.next_due_ms.has_value());
  EXPECT_TRUE(st.pause_known);
  EXPECT_EQ(st.paused_buckets, 0);
  EXPECT_TRUE(st.streams.empty()) << "streams are read only with a group";
}

TEST_F(InspectorTest, StatsCountPendingOverdueAndTheHeadPerBucketAndInTotal) {
  auto p = producer(4);
  const long long now = p->now_ms();
  // Overdue ones: the relay is not running, so they stay in the schedule.
  for (int i = 0; i < 6; ++i) p->schedule(due_at("late:" + std::to_string(i), now - 1000 - i));
  for (int i = 0; i < 5; ++i) p->schedule(due_at("later:" + std::to_string(i), now + 3'600'000 + i));
  const NamespaceStats st = Inspector(*p).stats();
  EXPECT_EQ(st.pending, 11);
  EXPECT_EQ(st.overdue, 6);
  EXPECT_EQ(st.next_due_ms, now - 1005);
  long long pending = 0, overdue = 0;
  for (const BucketStats& b : st.buckets) {
    const std::string key = KeyLayout("i", b.bucket).schedule_key();
    EXPECT_EQ(b.pending, integer(redis_, {"ZCARD", key})) << "bucket " << b.bucket;
    EXPECT_EQ(b.overdue, integer(redis_, {"ZCOUNT", key, "-inf", std::to_string(st.now_ms)}));
    pending += b.pending;
    overdue += b.overdue;
  }
  EXPECT_EQ(pending, st.pending);
  EXPECT_EQ(overdue, st.overdue);
}

TEST_F(InspectorTest, StatsReadThePauseOfEachBucketAndItsEnd) {
  auto p = producer(2);
  p->pause(std::chrono::milliseconds(60'000));
  NamespaceStats st = Inspector(*p).stats();
  EXPECT_EQ(st.paused_buckets, 2);
  EXPECT_EQ(st.pause_flags, 2);
  ASSERT_TRUE(st.paused_until.has_value());
  EXPECT_GT(*st.paused_until, st.now_ms);
  EXPECT_LE(*st.paused_until, st.now_ms + 60'000);
  for (const BucketStats& b : st.buckets) EXPECT_EQ(b.paused_until, st.paused_until);

  p->resume();
  // One bucket paused until resumed (the flag holds 0): the namespace's end is 0.
  redis_.command({"SET", p->placement().paused_key_of_bucket(1), "0"});
  st = Inspector(*p).stats();
  EXPECT_EQ(st.paused_buckets, 1);
  EXPECT_FALSE(st.buckets[0].paused_until.has_value());
  EXPECT_EQ(st.buckets[1].paused_until, 0);
  EXPECT_EQ(st.paused_until, 0);
}

TEST_F(InspectorTest, StatsWithAGroupReadTheStreamAndTheGroupInTheSameCall) {
  auto p = producer(1);
  const std::string stream = p->placement().streams().front();
  NamespaceStats st = Inspector(*p).stats("workers");
  ASSERT_EQ(st.streams.size(), 1u);
  EXPECT_FALSE(st.streams[0].exists);
  EXPECT_EQ(st.streams_existing, 0u);
  EXPECT_FALSE(st.group_pending.has_value());

  redis_.command({"XGROUP", "CREATE", stream, "workers", "$", "MKSTREAM"});
  for (int i = 0; i < 3; ++i) redis_.command({"XADD", stream, "*", "id", "t" + std::to_string(i)});
  redis_.command({"XREADGROUP", "GROUP", "workers", "c1", "COUNT", "1", "STREAMS", stream, ">"});
  st = Inspector(*p).stats("workers");
  EXPECT_EQ(st.streams[0].key, stream);
  EXPECT_TRUE(st.streams[0].exists);
  EXPECT_EQ(st.stream_length, 3);
  EXPECT_EQ(st.groups_found, 1u);
  EXPECT_EQ(st.group_pending, 1);
  EXPECT_EQ(st.group_lag, 2);
  EXPECT_EQ(Inspector(*p).stats("nobody").groups_found, 0u);
}

TEST_F(InspectorTest, ReplaysAndPurgesDeadLettersAndSaysWhichWereGone) {
  auto p = producer(1);
  Inspector inspector(*p);
  ASSERT_EQ(inspector.dead_streams().size(), 1u);
  const std::string dead = inspector.dead_streams()[0].key;
  const std::string first = redis_.command({"XADD", dead, "*", "id", "order:1", "reason", "boom"}).str;
  const std::string second = redis_.command({"XADD", dead, "*", "id", "order:2", "reason", "boom"}).str;
  const std::string broken = redis_.command({"XADD", dead, "*", "reason", "no id"}).str;

  const DeadLetterList listed = inspector.list_dead_letters(10);
  ASSERT_EQ(listed.entries.size(), 3u);
  EXPECT_EQ(listed.entries[0].task_id, "order:1");
  EXPECT_EQ(inspector.newest_dead_letter_id(0), broken);
  EXPECT_EQ(inspector.dead_letter_range(0, "-", "+", 2).size(), 2u);

  const auto found = inspector.read_dead_letters({{0, first}, {0, broken}, {0, "1-1"}});
  ASSERT_TRUE(found[0].has_value());
  EXPECT_EQ(found[0]->field("reason"), "boom");
  EXPECT_FALSE(found[2].has_value()) << "an entry never written is gone";

  const DeadReplay replayed = inspector.replay_dead_letter(*found[0], 60'000);
  EXPECT_EQ(replayed.outcome, DeadReplay::Outcome::Replayed);
  EXPECT_EQ(replayed.task_id, "order:1");
  EXPECT_FALSE(replayed.replaced);
  EXPECT_TRUE(p->show("order:1").pending);
  EXPECT_EQ(inspector.replay_dead_letter(*found[0], 0).outcome, DeadReplay::Outcome::Gone);
  EXPECT_EQ(inspector.replay_dead_letter(*found[1], 0).outcome, DeadReplay::Outcome::NoTaskId);
  EXPECT_EQ(integer(redis_, {"XLEN", dead}), 2) << "a letter without a task id is left in place";

  EXPECT_EQ(inspector.purge_dead_letters({{0, second}, {0, first}}), (std::vector<bool>{true, false}));
  EXPECT_EQ(integer(redis_, {"XLEN", dead}), 1);
}

TEST_F(InspectorTest, ARangeStepIsBoundedAndAnswersACursorUntilTheBucketIsDone) {
  auto p = producer(1);
  const long long now = p->now_ms();
  for (int i = 0; i < 5; ++i) p->schedule(due_at("cart:" + std::to_string(i), now + 600'000 + i));
  p->schedule(due_at("order:1", now + 600'000));
  Inspector inspector(*p);
  RangeFilter filter;
  filter.prefix = "cart:";
  long long cancelled = 0;
  std::string step;
  int calls = 0;
  do {
    const RangeResult r = inspector.range_step(RangeAction::Cancel, 0, filter, step, 2);
    EXPECT_LE(r.examined, 2);
    cancelled += r.acted;
    step = r.cursor;
    ASSERT_LT(++calls, 20);
  } while (!step.empty());
  EXPECT_EQ(cancelled, 5);
  EXPECT_GT(calls, 1);
  EXPECT_EQ(Inspector(*p).stats().pending, 1) << "order:1 is outside the prefix";
}

TEST_F(InspectorTest, TheAuditTrailAppendsAndReadsBackOnTheNamespace) {
  auto p = producer(1);
  AuditRecord record;
  record.actor = "tester";
  record.via = "cli";
  record.action = "dead purge";
  record.target = "entries=1-1";
  record.outcome = "exit 0";
  Inspector(*p).audit_trail(100).append(record);
  const AuditPage page = Inspector(*p).audit_trail(100).read(AuditQuery{});
  ASSERT_EQ(page.records.size(), 1u);
  EXPECT_EQ(page.records[0].actor, "tester");
  EXPECT_EQ(page.records[0].action, "dead purge");
  EXPECT_EQ(integer(redis_, {"XLEN", audit_stream_key("i")}), 1);
}

}  // namespace
}  // namespace expiry::test
