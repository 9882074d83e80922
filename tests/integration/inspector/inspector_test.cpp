// The Inspector (src/inspector/inspector.h) against a real redis-server: namespace stats per
// bucket and in total (schedules, pause flags, streams and a consumer group), dead letters read,
// replayed and purged, a bounded range step, the audit trail, the overview's activity, groups,
// dead letters and relays, the timeline, a task's state, the recurring schedules in brief, the
// orphan scan and the plain stream reads, each checked against what the test wrote to Redis. Each
// test has its own server.
#include "inspector/inspector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "functions/stream_entry.h"
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
  // Each bucket's end is computed on its own call (a millisecond may pass between them): the
  // namespace's is the latest.
  long long latest = 0;
  for (const BucketStats& b : st.buckets) {
    ASSERT_TRUE(b.paused_until.has_value());
    EXPECT_GT(*b.paused_until, st.now_ms);
    latest = std::max(latest, *b.paused_until);
  }
  EXPECT_EQ(st.paused_until, latest);

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

TEST_F(InspectorTest, TheOverviewReadsTheActivityGroupsDeadLettersByReasonAndRelays) {
  auto p = producer(1);
  Inspector inspector(*p);
  const std::string stream = p->placement().streams().front();
  const std::string dead = inspector.dead_streams()[0].key;
  const long long now = p->now_ms();
  // Three forwarded entries of the last minute, 10, 20 and 30 ms late.
  for (int i = 1; i <= 3; ++i) {
    redis_.command({"XADD", stream, "*", "id", "t" + std::to_string(i), "due_ms", std::to_string(now - 1000), "fired_ms",
                    std::to_string(now - 1000 + 10 * i), "created_ms", std::to_string(now - 5000)});
  }
  redis_.command({"XGROUP", "CREATE", stream, "workers", "0"});
  redis_.command({"XREADGROUP", "GROUP", "workers", "c1", "COUNT", "2", "STREAMS", stream, ">"});
  for (const char* reason : {"boom", "boom", "late"}) redis_.command({"XADD", dead, "*", "id", "x", "reason", reason});
  TestConnection relay(server_.host(), server_.port());
  relay.command({"SUBSCRIBE", "i:health:relay-a"});

  const Overview o = inspector.overview();
  EXPECT_EQ(o.stats.buckets.size(), 1u);
  ASSERT_TRUE(o.activity.has_value());
  EXPECT_EQ(o.activity->sampled, 3);
  EXPECT_FALSE(o.activity->capped);
  EXPECT_DOUBLE_EQ(o.activity->forwarded_per_second, 3.0 / 60.0);
  EXPECT_EQ(o.activity->lateness_p50_ms, 20);
  EXPECT_EQ(o.activity->lateness_p99_ms, 30);
  ASSERT_TRUE(o.groups.has_value());
  ASSERT_EQ(o.groups->size(), 1u);
  const ConsumerGroupInfo& g = o.groups->front();
  EXPECT_EQ(g.name, "workers");
  EXPECT_EQ(g.streams, 1);
  EXPECT_EQ(g.pending, 2);
  EXPECT_EQ(g.lag, 1);
  EXPECT_EQ(g.consumer_count, 1u);
  ASSERT_EQ(g.consumers.size(), 1u);
  EXPECT_EQ(g.consumers[0].name, "c1");
  EXPECT_EQ(g.consumers[0].pending, 2);
  EXPECT_EQ(o.dead.total, 3);
  EXPECT_EQ(o.dead.scanned, 3);
  EXPECT_EQ(o.dead.by_reason, (std::map<std::string, long long>{{"boom", 2}, {"late", 1}}));
  ASSERT_TRUE(o.relays.has_value());
  EXPECT_EQ(o.relays->count, 1u);
  EXPECT_EQ(o.relays->instances, std::vector<std::string>{"relay-a"});
}

TEST_F(InspectorTest, TheTimelineCountsTheTasksOfEachBarOverdueAndBeyond) {
  auto p = producer(2);
  const long long now = p->now_ms();
  p->schedule(due_at("late", now - 1000));
  p->schedule(due_at("soon", now + 2000));                 // minute bar 0 (5 s bars)
  p->schedule(due_at("half-hour", now + 1'850'000));       // hour bar 6 (5 min bars)
  p->schedule(due_at("in-two-days", now + 2 * 86'400'000));
  const Timeline t = Inspector(*p).timeline();
  EXPECT_GE(t.now_ms, now);
  EXPECT_EQ(t.overdue, 1);
  EXPECT_EQ(t.beyond, 1);
  EXPECT_EQ(t.horizon_ms, 86'400'000);
  ASSERT_EQ(t.ranges.size(), 3u);
  EXPECT_EQ(t.ranges[0].name, "minute");
  std::vector<long long> minute(12, 0), hour(12, 0), day(24, 0);
  minute[0] = 1;
  hour[0] = 1;
  hour[6] = 1;
  day[0] = 2;
  EXPECT_EQ(t.ranges[0].counts, minute);
  EXPECT_EQ(t.ranges[1].counts, hour);
  EXPECT_EQ(t.ranges[2].counts, day);
}

TEST_F(InspectorTest, TheStateOfATaskIsPendingFiredWithEachGroupsDeliveryDeadOrUnknown) {
  auto p = producer(1);
  Inspector inspector(*p);
  const long long now = p->now_ms();
  p->schedule(due_at("waiting", now + 600'000));
  TaskState s = inspector.task_state("waiting");
  EXPECT_EQ(s.state, TaskState::State::Pending);
  EXPECT_EQ(s.task.due_ms, now + 600'000);

  s = inspector.task_state("never");
  EXPECT_EQ(s.state, TaskState::State::Unknown);
  EXPECT_FALSE(s.fired.has_value());
  EXPECT_FALSE(s.dead.has_value());

  // Fired: its entry in the default stream; "acked" read and acknowledged it, "holding" read it
  // and holds it, "behind" has not read it yet.
  const std::string stream = p->placement().streams().front();
  for (const char* group : {"acked", "holding", "behind"}) redis_.command({"XGROUP", "CREATE", stream, group, "0", "MKSTREAM"});
  redis_.command({"XADD", stream, "*", "id", "other"});
  const std::string entry = redis_.command({"XADD", stream, "*", "id", "done", "due_ms", "100", "fired_ms", "150"}).str;
  redis_.command({"XREADGROUP", "GROUP", "acked", "c1", "STREAMS", stream, ">"});
  redis_.command({"XACK", stream, "acked", entry});
  redis_.command({"XREADGROUP", "GROUP", "holding", "c2", "STREAMS", stream, ">"});
  s = inspector.task_state("done");
  EXPECT_EQ(s.state, TaskState::State::Fired);
  EXPECT_EQ(s.stream, stream);
  EXPECT_EQ(s.scanned_stream, 2u);
  ASSERT_TRUE(s.fired.has_value());
  EXPECT_EQ(s.fired->entry_id, entry);
  EXPECT_EQ(s.fired->due_ms, 100);
  EXPECT_EQ(s.fired->fired_ms, 150);
  ASSERT_TRUE(s.fired->groups.has_value());
  std::map<std::string, GroupDelivery> by_group;
  for (const GroupDelivery& g : *s.fired->groups) by_group[g.group] = g;
  ASSERT_EQ(by_group.size(), 3u);
  EXPECT_EQ(by_group["acked"].state, GroupDelivery::State::Acknowledged);
  EXPECT_EQ(by_group["holding"].state, GroupDelivery::State::Delivered);
  EXPECT_EQ(by_group["holding"].consumer, "c2");
  EXPECT_EQ(by_group["holding"].deliveries, 1);
  EXPECT_EQ(by_group["behind"].state, GroupDelivery::State::Unread);

  // Dead: its dead letter, whatever it fired before.
  const std::string dead = inspector.dead_streams()[0].key;
  const std::string letter = redis_.command({"XADD", dead, "*", "id", "done", "reason", "boom", "deliveries", "3"}).str;
  s = inspector.task_state("done");
  EXPECT_EQ(s.state, TaskState::State::Dead);
  EXPECT_TRUE(s.fired.has_value());
  ASSERT_TRUE(s.dead.has_value());
  EXPECT_EQ(s.dead_stream, dead);
  EXPECT_EQ(s.dead->entry_id, letter);
  EXPECT_EQ(s.dead->ref.entry_id, letter);
  EXPECT_EQ(s.dead->reason, "boom");
  EXPECT_EQ(s.dead->deliveries, 3);
  EXPECT_EQ(s.dead->when_ms, std::stoll(letter.substr(0, letter.find('-'))));
}

TEST_F(InspectorTest, RecurringSummariesListEachScheduleUpToTheLimitAndSayWhetherMoreAre) {
  auto p = producer(2);
  for (const char* id : {"daily", "hourly", "often"}) {
    RecurringSpec spec;
    spec.id = id;
    spec.every = "15m";
    spec.tz = "Europe/Berlin";
    p->set_recurring(spec);
  }
  p->pause_recurring("hourly");
  Inspector inspector(*p);
  const RecurringSummaries all = inspector.recurring_summaries(10);
  EXPECT_FALSE(all.more);
  ASSERT_EQ(all.schedules.size(), 3u);
  std::map<std::string, RecurringSummary> by_id;
  for (const RecurringSummary& s : all.schedules) by_id[s.id] = s;
  EXPECT_EQ(by_id["daily"].tz, "Europe/Berlin");
  EXPECT_TRUE(by_id["daily"].rule.has_value());
  EXPECT_FALSE(by_id["daily"].paused);
  EXPECT_TRUE(by_id["daily"].next_ms.has_value());
  EXPECT_TRUE(by_id["hourly"].paused);
  const RecurringSummaries two = inspector.recurring_summaries(2);
  EXPECT_EQ(two.schedules.size(), 2u);
  EXPECT_TRUE(two.more);
  EXPECT_TRUE(inspector.recurring_schedules().get("often").has_value());
}

TEST_F(InspectorTest, TheOrphanScanFindsKeysOutsideTheScheduleAndRepairsThem) {
  auto p = producer(2);
  const long long now = p->now_ms();
  p->schedule(due_at("kept", now + 600'000));
  p->schedule(due_at("lost", now + 600'000));
  const KeyLayout lost = p->placement().keys_of_task("lost");
  redis_.command({"ZREM", lost.schedule_key(), "lost"});
  // A pending task in bucket 5 of a 2-bucket namespace: no relay serves it.
  const KeyLayout far("i", 5);
  redis_.command({"ZADD", far.schedule_key(), std::to_string(now + 600'000), "stray"});
  redis_.command({"HSET", far.shadow_key("stray"), "payload", ""});

  Inspector inspector(*p);
  int pages = 0;
  OrphanReport r = inspector.scan_orphans({false, 10}, [&](const OrphanReport&) { ++pages; });
  EXPECT_GE(pages, 1);
  EXPECT_EQ(r.orphans(), 2u) << "the trigger key and shadow hash of 'lost'";
  EXPECT_EQ(r.orphan_shadows, 1u);
  EXPECT_EQ(r.orphan_triggers, 1u);
  ASSERT_EQ(r.examples.size(), 2u);
  EXPECT_EQ(r.examples[0].id, "lost");
  EXPECT_EQ(r.unserved, 1u);
  EXPECT_EQ(r.unserved_buckets, std::set<int>{5});
  EXPECT_EQ(r.unserved_examples, std::vector<std::string>{far.shadow_key("stray")});
  EXPECT_EQ(integer(redis_, {"EXISTS", lost.shadow_key("lost")}), 1) << "a scan without repair deletes nothing";

  r = inspector.scan_orphans({true, 0});
  EXPECT_EQ(r.deleted, 2u);
  EXPECT_TRUE(r.examples.empty());
  EXPECT_EQ(integer(redis_, {"EXISTS", lost.shadow_key("lost"), lost.trigger_key("lost")}), 0);
  EXPECT_EQ(inspector.scan_orphans({false, 10}).orphans(), 0u);
  EXPECT_TRUE(p->show("kept").pending);
}

TEST_F(InspectorTest, StreamReadsFindTheNewestEntryAndWhatCameAfterIt) {
  auto p = producer(1);
  Inspector inspector(*p);
  const std::string stream = p->placement().streams().front();
  EXPECT_EQ(inspector.stream_exists(0), false);
  EXPECT_EQ(inspector.newest_entry_ids(), std::vector<std::string>{"0-0"});
  const std::string first = redis_.command({"XADD", stream, "*", "id", "a"}).str;
  const std::string second = redis_.command({"XADD", stream, "*", "id", "b"}).str;
  EXPECT_EQ(inspector.stream_exists(0), true);
  EXPECT_EQ(inspector.newest_entry_ids(), std::vector<std::string>{second});
  auto read = inspector.read_streams_after({"0-0"}, 10, 100);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].entry.entry_id, first);
  EXPECT_EQ(read[1].entry.field("id"), "b");
  EXPECT_EQ(inspector.read_streams_after({"0-0"}, 1, 100).size(), 1u) << "at most `count`";
  const auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(inspector.read_streams_after({second}, 10, 200).empty());
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(150)) << "it blocked for an entry";

  const long long clock = *inspector.clock_of_task("a");
  EXPECT_LE(std::abs(clock - p->now_ms()), 5'000);
}

TEST_F(InspectorTest, StreamReadsOfBucketStreamsMergeThemInEntryIdOrder) {
  auto p = producer(2);
  ASSERT_TRUE(p->placement().bucket_streams());
  Inspector inspector(*p);
  const std::vector<std::string> streams = p->placement().streams();
  ASSERT_EQ(streams.size(), 2u);
  // Explicit ids: two entries added in the same millisecond to two streams could share one.
  const std::string a = redis_.command({"XADD", streams[1], "5-0", "id", "first"}).str;
  const std::string b = redis_.command({"XADD", streams[0], "7-0", "id", "second"}).str;
  EXPECT_EQ(inspector.newest_entry_ids(), (std::vector<std::string>{b, a}));
  const auto read = inspector.read_streams_after({"0-0", "0-0"}, 10, 0);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].stream, 1u);
  EXPECT_EQ(read[0].entry.entry_id, a);
  EXPECT_EQ(read[1].stream, 0u);
  EXPECT_TRUE(inspector.read_streams_after({b, a}, 10, 0).empty());
}

}  // namespace
}  // namespace expiry::test
