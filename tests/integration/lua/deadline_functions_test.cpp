// The deadline features of the function library (src/lua/expiry.lua, docs/protocol.md), called
// directly on a real redis-server: schedule options (if_absent, debounce_max_ms, max_late_ms,
// traceparent), the lateness limit in claim and sweep, pause and resume, run-now, and the
// bounded range walks of cancel and run-now. Also that callers of the older FCALL forms get the
// replies they knew.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "functions/schedule_batch.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

// How far ahead a test schedules a task it wants late: a task created after its due time is
// exempt from lateness limits (lateness_applies), and a busy machine can take tens of ms per call.
constexpr long long kCreatedBeforeDueMs = 1000;

using namespace std::chrono_literals;

const KeyLayout kKeys("expiry", 0);
const std::string kStream = "expiry:stream";
const std::string kDead = "expiry:stream:dead";
constexpr const char* kTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr long long kFar = 4102444800000;  // 2100-01-01

class DeadlineFunctions : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(redis_.command(load_library_argv()).failed()); }

  long long now_ms() {
    const Reply t = redis_.command({"TIME"});
    return std::stoll(t.elements[0].str) * 1000 + std::stoll(t.elements[1].str) / 1000;
  }

  Reply schedule(const std::string& id, ScheduleMode mode, long long ms, const std::string& options,
                 const std::string& payload = "p") {
    return redis_.command(schedule_argv(kKeys, id, mode, ms, payload, {}, std::nullopt, options));
  }

  std::map<std::string, std::string> hash(const std::string& key) {
    std::map<std::string, std::string> out;
    const Reply r = redis_.command({"HGETALL", key});
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
    return out;
  }

  // The fields of every entry of `stream`, oldest first.
  std::vector<std::map<std::string, std::string>> entries(const std::string& stream) {
    std::vector<std::map<std::string, std::string>> out;
    const Reply r = redis_.command({"XRANGE", stream, "-", "+"});
    for (const auto& e : r.elements) {
      std::map<std::string, std::string> fields;
      const auto& list = e.elements[1].elements;
      for (size_t i = 0; i + 1 < list.size(); i += 2) fields[list[i].str] = list[i + 1].str;
      out.push_back(fields);
    }
    return out;
  }

  long long integer(const std::vector<std::string>& argv) { return redis_.command(argv).integer; }

  bool pending(const std::string& id) {
    return redis_.command({"ZSCORE", kKeys.schedule_key(), id}).type != Reply::Type::Nil;
  }

  // Waits until the Redis clock has passed `ms`.
  void wait_clock_past(long long ms) { ASSERT_TRUE(wait_until([&] { return now_ms() > ms; }, 30s)); }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(DeadlineFunctions, IfAbsentKeepsAPendingTaskAndSaysSo) {
  const auto first = decode_schedule(schedule("a", ScheduleMode::At, kFar, "if_absent", "first"));
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->kept);
  EXPECT_FALSE(first->replaced);
  const auto again = decode_schedule(schedule("a", ScheduleMode::At, kFar + 5, "if_absent", "second"));
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->kept);
  EXPECT_EQ(again->due_ms, kFar);
  EXPECT_EQ(hash(kKeys.shadow_key("a"))["payload"], "first");
  // Replace, the default, still replaces.
  const auto replaced = decode_schedule(schedule("a", ScheduleMode::At, kFar + 9, "", "third"));
  ASSERT_TRUE(replaced);
  EXPECT_TRUE(replaced->replaced);
  EXPECT_EQ(hash(kKeys.shadow_key("a"))["payload"], "third");
}

TEST_F(DeadlineFunctions, DebounceNeverMovesADueTimePastTheFirstSchedulePlusTheMaximum) {
  const auto first = decode_schedule(schedule("d", ScheduleMode::Delay, 5000, "debounce_max_ms=8000"));
  ASSERT_TRUE(first);
  const long long created = std::stoll(hash(kKeys.shadow_key("d"))["created_ms"]);
  EXPECT_EQ(first->due_ms, created + 5000);
  // Called again: the new due time (now + 9 s) is past created + 8 s, so it is capped there.
  const auto second = decode_schedule(schedule("d", ScheduleMode::Delay, 9000, "debounce_max_ms=8000"));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->due_ms, created + 8000);
  EXPECT_EQ(std::stoll(hash(kKeys.shadow_key("d"))["first_ms"]), created);
  // An earlier due time is taken as it is.
  const auto third = decode_schedule(schedule("d", ScheduleMode::Delay, 1000, "debounce_max_ms=8000"));
  ASSERT_TRUE(third);
  EXPECT_LE(third->due_ms, created + 8000);
  EXPECT_GE(third->due_ms, created + 1000);
  // After a cancel the next debounce starts afresh.
  ASSERT_EQ(redis_.command(cancel_argv(kKeys, "d")).integer, 1);
  const auto fresh = decode_schedule(schedule("d", ScheduleMode::Delay, 9000, "debounce_max_ms=8000"));
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->due_ms, std::stoll(hash(kKeys.shadow_key("d"))["created_ms"]) + 8000) << "capped from its own call";
  EXPECT_EQ(hash(kKeys.shadow_key("d")).count("first_ms"), 0u);
}

TEST_F(DeadlineFunctions, BadOptionsWriteNothing) {
  for (const std::string bad : {"traceparent=00-zz", "bogus", "if_absent debounce_max_ms=5", "debounce_max_ms=0",
                                "max_late_ms=-1",
                                "traceparent=ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}) {
    SCOPED_TRACE(bad);
    const Reply r = schedule("x", ScheduleMode::Delay, 1000, bad);
    EXPECT_EQ(r.type, Reply::Type::Error) << r.describe();
    EXPECT_EQ(integer({"DBSIZE"}), 0);
  }
}

TEST_F(DeadlineFunctions, ScheduleManyTakesOptionsPerTaskInOrder) {
  const std::string traced = std::string("max_late_ms=7 traceparent=") + kTrace;
  const std::vector<ScheduleBatchTask> tasks = {
      {"m", ScheduleMode::At, kFar, "one", {}, "if_absent"},
      {"m", ScheduleMode::At, kFar + 1, "two", {}, "if_absent"},
      {"t", ScheduleMode::At, kFar, "p", {}, traced},
      {"plain", ScheduleMode::At, kFar, "p", {}, ""},
  };
  const Reply r = redis_.command(schedule_many_argv(kKeys, tasks));
  const auto results = decode_schedule_many(r, tasks.size());
  ASSERT_TRUE(results) << r.describe();
  EXPECT_FALSE((*results)[0].kept);
  EXPECT_TRUE((*results)[1].kept);
  EXPECT_EQ((*results)[1].due_ms, kFar);
  EXPECT_EQ(hash(kKeys.shadow_key("m"))["payload"], "one");
  EXPECT_EQ(hash(kKeys.shadow_key("t"))["max_late_ms"], "7");
  EXPECT_EQ(hash(kKeys.shadow_key("t"))["traceparent"], kTrace);
  EXPECT_EQ(hash(kKeys.shadow_key("plain")).size(), 2u) << "payload and created_ms only: the score holds the due time";
}

TEST_F(DeadlineFunctions, ALateTaskGoesToTheDeadLettersInTheSameStepAndAnOnTimeOneIsForwarded) {
  const long long due = now_ms() + kCreatedBeforeDueMs;
  ASSERT_FALSE(schedule("late", ScheduleMode::At, due, std::string("traceparent=") + kTrace, "pl").failed());
  ASSERT_FALSE(schedule("own-limit", ScheduleMode::At, due, "max_late_ms=0", "po").failed());
  wait_clock_past(due + 60);
  const auto dead = decode_claim(redis_.command(claim_argv(kKeys, "late", "event", kStream, "workers", {50, ""})));
  ASSERT_TRUE(dead);
  ASSERT_EQ(dead->outcome, ClaimResult::Outcome::DeadLettered);
  EXPECT_GT(dead->lateness_ms, 50);
  // Its own limit 0 (none) overrides the caller's 50.
  const auto kept = decode_claim(redis_.command(claim_argv(kKeys, "own-limit", "event", kStream, "workers", {50, ""})));
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->outcome, ClaimResult::Outcome::Forwarded);

  const auto dead_entries = entries(kDead);
  ASSERT_EQ(dead_entries.size(), 1u);
  const auto& e = dead_entries[0];
  EXPECT_EQ(e.at("reason"), "late");
  EXPECT_EQ(e.at("id"), "late");
  EXPECT_EQ(e.at("payload"), "pl");
  EXPECT_EQ(e.at("original_stream"), kStream);
  EXPECT_EQ(e.at("traceparent"), kTrace);
  EXPECT_EQ(std::stoll(e.at("late_ms")), dead->lateness_ms);
  EXPECT_EQ(e.at("max_late_ms"), "50");
  const auto forwarded = entries(kStream);
  ASSERT_EQ(forwarded.size(), 1u);
  EXPECT_EQ(forwarded[0].at("id"), "own-limit");
  EXPECT_FALSE(pending("late"));
  EXPECT_EQ(integer({"EXISTS", kKeys.shadow_key("late"), kKeys.trigger_key("late")}), 0);
}

TEST_F(DeadlineFunctions, ASweepDeadLettersLateTasksAndForwardsTheRestEachOnce) {
  // Every task must be created before its due time: one created after it is exempt from the
  // lateness limit (lateness_applies), so the 40 schedules get 2 s on a busy machine (20 ms was
  // too little once under load: fewer than 20 were dead-lettered).
  const long long due = now_ms() + 2000;
  for (int i = 0; i < 40; ++i) {
    const std::string options = i % 2 ? "max_late_ms=10" : "max_late_ms=600000";
    ASSERT_FALSE(schedule("s" + std::to_string(i), ScheduleMode::At, due, options).failed());
  }
  ASSERT_LT(now_ms(), due) << "scheduling 40 tasks took over 2 s";
  wait_clock_past(due + 40);
  // One call takes all 40 unless its 2 ms budget runs out first (a busy machine): then the next
  // calls go on where it stopped.
  long long forwarded = 0;
  long long late = 0;
  for (int call = 0; call < 40 && forwarded + late < 40; ++call) {
    const auto sweep = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 1000, "sweep", "workers", {0, kDead})));
    ASSERT_TRUE(sweep);
    EXPECT_EQ(sweep->paused_until_ms, -1);
    forwarded += sweep->forwarded;
    late += sweep->late;
    if (forwarded + late == 40) {
      EXPECT_EQ(sweep->pending, 0);
    }
  }
  EXPECT_EQ(forwarded, 20);
  EXPECT_EQ(late, 20);
  std::set<std::string> seen;
  for (const auto* stream : {&kStream, &kDead}) {
    for (const auto& e : entries(*stream)) EXPECT_TRUE(seen.insert(e.at("id")).second) << e.at("id") << " twice";
  }
  EXPECT_EQ(seen.size(), 40u);
}

// The due time lives in the schedule's score only. A shadow hash an earlier release wrote still
// holds a due_ms of its own, which may be stale after a reschedule: the entry carries the score.
TEST_F(DeadlineFunctions, TheEntrysDueTimeIsTheScoreEvenWhenAnOldShadowHashHoldsAnother) {
  const long long due = now_ms() - 5;
  ASSERT_EQ(integer({"ZADD", kKeys.schedule_key(), std::to_string(due), "old"}), 1);
  ASSERT_EQ(integer({"HSET", kKeys.shadow_key("old"), "payload", "p", "due_ms", "1000", "created_ms",
                     std::to_string(due - 100)}), 3);
  const auto sweep = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers")));
  ASSERT_TRUE(sweep);
  EXPECT_EQ(sweep->forwarded, 1);
  const auto got = entries(kStream);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].at("id"), "old");
  EXPECT_EQ(got[0].at("due_ms"), std::to_string(due));
  EXPECT_EQ(got[0].at("created_ms"), std::to_string(due - 100));
}

// The caller's dead stream is where the default stream's late tasks go (docs/protocol.md, the
// dead stream table): not <stream>:dead. When it cannot take the entry, the task stays pending
// and nothing is written anywhere.
TEST_F(DeadlineFunctions, TheCallersDeadStreamTakesTheDefaultStreamsLateTasksOrTheTaskStaysPending) {
  const long long due = now_ms() + kCreatedBeforeDueMs;
  ASSERT_FALSE(schedule("to-my-dead", ScheduleMode::At, due, "", "p1").failed());
  wait_clock_past(due + 60);
  const auto dead = decode_claim(redis_.command(claim_argv(kKeys, "to-my-dead", "event", kStream, "workers", {10, "my:dead"})));
  ASSERT_TRUE(dead);
  ASSERT_EQ(dead->outcome, ClaimResult::Outcome::DeadLettered);
  const auto mine = entries("my:dead");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].at("id"), "to-my-dead");
  EXPECT_EQ(mine[0].at("reason"), "late");
  EXPECT_EQ(integer({"EXISTS", kDead}), 0) << "the default stream's late task went to <stream>:dead";

  // The same through a sweep.
  const long long due2 = now_ms() + kCreatedBeforeDueMs;
  ASSERT_FALSE(schedule("swept", ScheduleMode::At, due2, "", "p2").failed());
  wait_clock_past(due2 + 60);
  const auto sweep = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers", {10, "my:dead"})));
  ASSERT_TRUE(sweep);
  EXPECT_EQ(sweep->late, 1);
  EXPECT_EQ(entries("my:dead").size(), 2u);
  EXPECT_EQ(integer({"EXISTS", kDead}), 0);

  // A dead stream that holds a string: the call fails, nothing is written, the task stays pending.
  ASSERT_EQ(redis_.command({"SET", "bad:dead", "x"}).str, "OK");
  const long long due3 = now_ms() + kCreatedBeforeDueMs;
  ASSERT_FALSE(schedule("stays", ScheduleMode::At, due3, "", "p3").failed());
  wait_clock_past(due3 + 60);
  const Reply refused = redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers", {10, "bad:dead"}));
  EXPECT_TRUE(refused.failed()) << refused.describe();
  EXPECT_NE(refused.str.find("bad:dead"), std::string::npos) << refused.str;
  EXPECT_TRUE(pending("stays"));
  EXPECT_EQ(integer({"EXISTS", kDead, kStream}), 0) << "the task was written to another stream";
  EXPECT_EQ(entries("my:dead").size(), 2u);
  EXPECT_EQ(redis_.command({"GET", "bad:dead"}).str, "x");
}

// A bucket at or above the namespace's count is served by no relay: every write to it is
// refused, naming the count and the bucket, and nothing is written (it was accepted and never fired).
TEST_F(DeadlineFunctions, WritesToABucketNoRelayServesAreRefused) {
  const KeyLayout one("expiry", 1);
  const auto refused = [&](const Reply& r) {
    EXPECT_TRUE(r.failed()) << r.describe();
    EXPECT_NE(r.str.find("bucket {1} is not served"), std::string::npos) << r.str;
    EXPECT_NE(r.str.find("has 1 bucket(s)"), std::string::npos) << r.str;
  };
  refused(redis_.command(schedule_argv(one, "t", ScheduleMode::Delay, 60000, "p")));
  EXPECT_EQ(integer({"EXISTS", one.schedule_key(), one.shadow_key("t"), one.trigger_key("t")}), 0);
  refused(redis_.command(run_now_argv(one, "t")));
  refused(redis_.command(pause_argv(one, 0)));

  // With NS:buckets = 2, bucket 1 is served and bucket 2 is not.
  ASSERT_EQ(redis_.command({"SET", "expiry:buckets", "2"}).str, "OK");
  EXPECT_FALSE(redis_.command(schedule_argv(one, "t", ScheduleMode::Delay, 60000, "p")).failed());
  const Reply two = redis_.command(schedule_argv(KeyLayout("expiry", 2), "u", ScheduleMode::Delay, 60000, "p"));
  EXPECT_TRUE(two.failed());
  EXPECT_NE(two.str.find("bucket {2} is not served: namespace expiry has 2 bucket(s)"), std::string::npos) << two.str;
  // Bucket 0 is always served; cancel of an unserved task still works (it cleans up).
  EXPECT_FALSE(schedule("zero", ScheduleMode::Delay, 60000, "").failed());
}

TEST_F(DeadlineFunctions, OlderCallersGetTheRepliesTheyKnew) {
  ASSERT_FALSE(schedule("o", ScheduleMode::At, 1, "").failed());
  ASSERT_FALSE(redis_.command(pause_argv(kKeys, 0)).failed());
  const std::vector<std::string> old_claim = {"FCALL", "expiry_claim", "4", kKeys.schedule_key(), kKeys.trigger_key("o"),
                                              kKeys.shadow_key("o"), kStream, "o", "event", "workers"};
  const Reply claim = redis_.command(old_claim);
  ASSERT_EQ(claim.elements.size(), 1u) << claim.describe();
  EXPECT_EQ(claim.elements[0].integer, 0);
  const Reply sweep = redis_.command({"FCALL", "expiry_sweep", "2", kKeys.schedule_key(), kStream, "10", "sweep", "workers"});
  EXPECT_EQ(sweep.elements.size(), 7u) << sweep.describe();
  EXPECT_TRUE(pending("o"));
  ASSERT_FALSE(redis_.command(resume_argv(kKeys)).failed());
  const Reply after = redis_.command(old_claim);
  ASSERT_EQ(after.elements.size(), 3u) << after.describe();
  EXPECT_EQ(after.elements[0].integer, 1);
}

TEST_F(DeadlineFunctions, APausedBucketHoldsEveryTaskUntilResumedThenWakesTheRelays) {
  const auto paused = decode_pause(redis_.command(pause_argv(kKeys, 0)));
  ASSERT_TRUE(paused);
  EXPECT_EQ(paused->value, 0);
  for (int i = 0; i < 5; ++i) ASSERT_FALSE(schedule("h" + std::to_string(i), ScheduleMode::At, 1000 + i, "").failed());
  const auto claim = decode_claim(redis_.command(claim_argv(kKeys, "h0", "event", kStream, "workers")));
  ASSERT_TRUE(claim);
  EXPECT_EQ(claim->outcome, ClaimResult::Outcome::Paused);
  const auto sweep = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers")));
  ASSERT_TRUE(sweep);
  EXPECT_EQ(sweep->forwarded, 0);
  EXPECT_EQ(sweep->paused_until_ms, 0);
  EXPECT_EQ(sweep->overdue, 5);
  EXPECT_EQ(sweep->next_due_ms, -1) << "an untimed pause: no timer to arm";
  EXPECT_EQ(integer({"XLEN", kStream}), 0);

  Reply resumed;
  const auto messages = channel_messages(server_.host(), server_.port(), redis_, kKeys.wake_channel(),
                                         [&] { resumed = redis_.command(resume_argv(kKeys, 0)); });
  const auto result = decode_pause(resumed);
  ASSERT_TRUE(result) << resumed.describe();
  EXPECT_EQ(result->value, 1);
  EXPECT_EQ(result->overdue, 5);
  EXPECT_EQ(messages, (std::vector<std::string>{"1000@0"}));
  const auto drained = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers")));
  ASSERT_TRUE(drained);
  EXPECT_EQ(drained->forwarded, 5);
  const auto forwarded = entries(kStream);
  ASSERT_EQ(forwarded.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(forwarded[i].at("id"), "h" + std::to_string(i)) << "oldest first";
}

TEST_F(DeadlineFunctions, ATimedPauseEndsByItself) {
  const auto paused = decode_pause(redis_.command(pause_argv(kKeys, 300)));
  ASSERT_TRUE(paused);
  EXPECT_GT(paused->value, 0);
  ASSERT_FALSE(schedule("t", ScheduleMode::At, 1, "").failed());
  const auto held = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers")));
  ASSERT_TRUE(held);
  EXPECT_EQ(held->forwarded, 0);
  EXPECT_EQ(held->next_due_ms, paused->value) << "the relay's timer is armed for the end of the pause";
  wait_clock_past(paused->value);
  const auto after = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers")));
  ASSERT_TRUE(after);
  EXPECT_EQ(after->forwarded, 1);
  EXPECT_EQ(after->paused_until_ms, -1);
}

TEST_F(DeadlineFunctions, RunNowMakesATaskDueKeepingItsPayloadAndSaysItWasPromoted) {
  ASSERT_FALSE(schedule("r", ScheduleMode::At, kFar, "", "payload-r").failed());
  ASSERT_FALSE(redis_.command({"HSET", kKeys.shadow_key("r"), "attempt", "3"}).failed());
  const auto run = decode_run_now(redis_.command(run_now_argv(kKeys, "r", 0)));
  ASSERT_TRUE(run);
  EXPECT_TRUE(run->pending);
  EXPECT_EQ(run->previous_due_ms, kFar);
  EXPECT_LE(run->due_ms, now_ms());
  const auto sweep = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers")));
  ASSERT_TRUE(sweep);
  EXPECT_EQ(sweep->forwarded, 1);
  const auto e = entries(kStream).at(0);
  EXPECT_EQ(e.at("payload"), "payload-r");
  EXPECT_EQ(e.at("attempt"), "3");
  EXPECT_EQ(std::stoll(e.at("promoted_ms")), run->due_ms);
  EXPECT_EQ(std::stoll(e.at("promoted_from_ms")), kFar);
  const auto gone = decode_run_now(redis_.command(run_now_argv(kKeys, "r")));
  ASSERT_TRUE(gone);
  EXPECT_FALSE(gone->pending);
}

TEST_F(DeadlineFunctions, ARetryAndAReplayKeepTheTraceparent) {
  ASSERT_FALSE(schedule("tr", ScheduleMode::At, 1, std::string("traceparent=") + kTrace).failed());
  const auto sweep = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers")));
  ASSERT_TRUE(sweep);
  ASSERT_EQ(sweep->forwarded, 1);
  const Reply read = redis_.command({"XREADGROUP", "GROUP", "workers", "c", "COUNT", "1", "STREAMS", kStream, ">"});
  ASSERT_EQ(read.type, Reply::Type::Array) << read.describe();
  const std::string entry_id = read.elements[0].elements[1].elements[0].elements[0].str;
  const Reply retry = redis_.command({"FCALL", "expiry_retry", "5", kStream, kDead, kKeys.schedule_key(),
                                      kKeys.trigger_key("tr"), kKeys.shadow_key("tr"), "workers", entry_id, "tr", "0",
                                      "5", "handler failed"});
  ASSERT_EQ(retry.type, Reply::Type::Array) << retry.describe();
  EXPECT_EQ(retry.elements[0].integer, 1);
  EXPECT_EQ(hash(kKeys.shadow_key("tr"))["traceparent"], kTrace);

  // A dead letter replayed: schedule the late task with a limit, dead-letter it, replay it.
  const long long due = now_ms() + kCreatedBeforeDueMs;
  ASSERT_FALSE(schedule("tl", ScheduleMode::At, due, std::string("max_late_ms=1 traceparent=") + kTrace).failed());
  wait_clock_past(due + 20);
  const auto dead = decode_claim(redis_.command(claim_argv(kKeys, "tl", "event", kStream, "workers", {0, ""})));
  ASSERT_TRUE(dead);
  ASSERT_EQ(dead->outcome, ClaimResult::Outcome::DeadLettered);
  const Reply replay = redis_.command({"FCALL", "expiry_replay_dead", "4", kDead, kKeys.schedule_key(),
                                       kKeys.trigger_key("tl"), kKeys.shadow_key("tl"), dead->entry_id, "tl", "0",
                                       kStream});
  ASSERT_EQ(replay.type, Reply::Type::Array) << replay.describe();
  EXPECT_EQ(hash(kKeys.shadow_key("tl"))["traceparent"], kTrace);
  EXPECT_TRUE(pending("tl"));
}

// Walks a range to its end, asserting each call stays within its limit; returns the total acted on.
template <class Argv>
long long walk(TestConnection& redis, Argv argv_for, int limit, int* calls) {
  long long acted = 0;
  std::string cursor;
  *calls = 0;
  do {
    const Reply r = redis.command(argv_for(cursor));
    const auto result = decode_range(r);
    EXPECT_TRUE(result) << r.describe();
    if (!result) return -1;
    EXPECT_LE(result->examined, limit);
    acted += result->acted;
    cursor = result->cursor;
    ++*calls;
  } while (!cursor.empty() && *calls < 100000);
  return acted;
}

TEST_F(DeadlineFunctions, CancelRangeCancelsExactlyTheMatchingTasksInBoundedCalls) {
  // 3000 tasks, many sharing one due time (ties), interleaved prefixes.
  std::vector<ScheduleBatchTask> batch;
  std::vector<std::string> ids;
  for (int i = 0; i < 3000; ++i) ids.push_back((i % 3 == 0 ? "acct:7:" : "other:") + std::to_string(i));
  for (size_t i = 0; i < ids.size(); ++i) {
    batch.push_back({ids[i], ScheduleMode::At, kFar + static_cast<long long>(i % 4), "p", {}});
    if (batch.size() == 250) {
      ASSERT_FALSE(redis_.command(schedule_many_argv(kKeys, batch)).failed());
      batch.clear();
    }
  }
  int calls = 0;
  const long long cancelled = walk(
      redis_, [&](const std::string& c) { return cancel_range_argv(kKeys, {"acct:7:", std::nullopt, kFar + 3}, c, 70); },
      70, &calls);
  // acct ids i % 3 == 0 with due kFar + (i % 4) < kFar + 3: i % 4 != 3.
  long long expected = 0;
  for (int i = 0; i < 3000; i += 3) expected += (i % 4 != 3);
  EXPECT_EQ(cancelled, expected);
  EXPECT_GT(calls, 1);
  for (int i = 0; i < 3000; ++i) {
    const bool gone = i % 3 == 0 && i % 4 != 3;
    EXPECT_EQ(pending(ids[i]), !gone) << ids[i];
    if (gone) {
      EXPECT_EQ(integer({"EXISTS", kKeys.shadow_key(ids[i]), kKeys.trigger_key(ids[i])}), 0);
    }
  }
}

TEST_F(DeadlineFunctions, RunNowRangePromotesOnlyTheMatchingTasksNotYetDue) {
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i) ids.push_back((i % 2 ? "b:" : "a:") + std::to_string(i));
  std::vector<ScheduleBatchTask> batch;
  for (int i = 0; i < 200; ++i) {
    batch.push_back({ids[i], ScheduleMode::At, i < 100 ? kFar : kFar + 1000, "p", {}});
    if (batch.size() == 100) {
      ASSERT_FALSE(redis_.command(schedule_many_argv(kKeys, batch)).failed());
      batch.clear();
    }
  }
  int calls = 0;
  const long long promoted = walk(
      redis_, [&](const std::string& c) { return run_now_range_argv(kKeys, {"b:", std::nullopt, kFar + 500}, c, 30, 0); },
      30, &calls);
  EXPECT_EQ(promoted, 50) << "odd ids among the first 100";
  EXPECT_EQ(integer({"ZCOUNT", kKeys.schedule_key(), "-inf", std::to_string(now_ms())}), 50);
  EXPECT_EQ(integer({"ZCOUNT", kKeys.schedule_key(), std::to_string(kFar), std::to_string(kFar)}), 50);
}

}  // namespace
}  // namespace expiry::test
