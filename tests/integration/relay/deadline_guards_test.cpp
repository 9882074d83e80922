// Guards against the deadline bugs other job schedulers shipped (issue 20, item 7), each against
// a real redis-server and a real expiry-relay: no task fires before its due time on the Redis
// clock; a short task behind a long one is on time; far-future tasks neither fire nor spin the
// timer; reschedule and cancel racing the claim give exactly one outcome; 200k cycles leave no
// keys or memory behind; keyspace notifications lost in a Redis restart are noticed and the
// sweep still fires every task.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "functions/schedule_batch.h"
#include "relay_harness.h"

namespace expiry::test {
namespace {

const KeyLayout kKeys("expiry");
constexpr const char* kStream = "expiry:stream";

// A task of these tests: its id and its due time (ms, Redis clock).
struct Due {
  std::string id;
  long long due_ms;
};

// Schedules each task `at` its due time (pipelined) and checks that the library kept that time.
void schedule_at(SyncConnection& redis, const std::vector<Due>& tasks, const KeyLayout& keys = kKeys) {
  redis.command(load_library_argv());
  const size_t kWindow = 500;
  for (size_t start = 0; start < tasks.size(); start += kWindow) {
    std::vector<std::vector<std::string>> cmds;
    for (size_t i = start; i < std::min(tasks.size(), start + kWindow); ++i) {
      cmds.push_back(schedule_argv(keys, tasks[i].id, ScheduleMode::At, tasks[i].due_ms, "p-" + tasks[i].id));
    }
    std::vector<Reply> replies;
    pipeline(redis, cmds, &replies);
    for (size_t i = 0; i < replies.size(); ++i) {
      auto r = decode_schedule(replies[i]);
      ASSERT_TRUE(r.has_value()) << replies[i].describe();
      ASSERT_EQ(r->due_ms, tasks[start + i].due_ms) << tasks[start + i].id;
    }
  }
}

// Stream entries by task id.
std::map<std::string, std::vector<std::map<std::string, std::string>>> entries_by_id(SyncConnection& redis) {
  std::map<std::string, std::vector<std::map<std::string, std::string>>> out;
  for (auto& e : xrange_all(redis, kStream)) out[e.at(entry_field::kId)].push_back(e);
  return out;
}

std::optional<long long> zscore(SyncConnection& redis, const std::string& id, const KeyLayout& keys = kKeys) {
  const Reply r = redis.command({"ZSCORE", keys.schedule_key(), id});
  if (r.type != Reply::Type::String) return std::nullopt;
  return std::stoll(r.str);
}

long long dbsize(SyncConnection& redis) { return integer(redis, {"DBSIZE"}); }

long long used_memory(SyncConnection& redis) {
  const Reply r = redis.command({"INFO", "memory"});
  const std::string key = "used_memory:";
  const auto at = r.str.find(key);
  if (at == std::string::npos) throw std::runtime_error("INFO memory without used_memory: " + r.describe());
  return std::stoll(r.str.substr(at + key.size()));
}

// The relay's metric `series`, or -1 while /metrics does not answer.
double scrape(int port, const std::string& series) {
  const HttpResponse r = http_get(port, "/metrics");
  return r.status == 200 ? metric_value(r.body, series) : -1;
}

class DeadlineGuardsTest : public ::testing::Test {
 protected:
  // Starts relay "r1" (with metrics on a free port) and waits until it is subscribed.
  void start_relay_r1() {
    metrics_port_ = free_port();
    relay_ = start_relay(server_, "r1", {"--metrics-port", std::to_string(metrics_port_)});
    ASSERT_NO_FATAL_FAILURE(wait_relay_ready(redis_, "r1", *relay_));
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  std::unique_ptr<ChildProcess> relay_;
  int metrics_port_ = 0;
};

// asynq rounded due times to the second and fired up to 0.87 s early (hibiken/asynq#1071).
TEST_F(DeadlineGuardsTest, NoTaskIsClaimedBeforeItsDueTimeWhateverItsSubSecondOffset) {
  ASSERT_NO_FATAL_FAILURE(start_relay_r1());
  const long long now = redis_now_ms(redis_);
  std::vector<Due> tasks;
  // 180 tasks 7 ms apart: every offset within a second, in steps that do not divide 1000.
  for (int k = 0; k < 180; ++k) tasks.push_back({"step-" + std::to_string(k), now + 500 + k * 7LL});
  // 20 tasks at the edges of whole seconds on the Redis clock.
  const long long second = (now + 600) / 1000 * 1000 + 1000;
  const long long offsets[] = {0, 1, 2, 250, 499, 500, 501, 750, 998, 999};
  for (int s = 0; s < 2; ++s) {
    for (long long off : offsets) tasks.push_back({"edge-" + std::to_string(s) + "-" + std::to_string(off), second + s * 1000 + off});
  }
  ASSERT_NO_FATAL_FAILURE(schedule_at(redis_, tasks));

  ASSERT_TRUE(wait_until([&] { return xlen(redis_) >= static_cast<long long>(tasks.size()); }, 20s))
      << xlen(redis_) << " of " << tasks.size() << " forwarded\n" << relay_->output();
  auto fired = entries_by_id(redis_);
  long long max_late = 0;
  for (const auto& t : tasks) {
    ASSERT_EQ(fired[t.id].size(), 1u) << t.id;
    const auto& e = fired[t.id][0];
    const long long due = std::stoll(e.at(entry_field::kDueMs));
    const long long at = std::stoll(e.at(entry_field::kFiredMs));
    EXPECT_EQ(due, t.due_ms) << t.id;
    EXPECT_GE(at, due) << t.id << " fired " << due - at << " ms early (via " << e.at(entry_field::kVia) << ")";
    max_late = std::max(max_late, at - due);
  }
  RecordProperty("max_lateness_ms", static_cast<int>(max_late));
}

// The claim itself, called by hand at the last milliseconds before the due time: it must answer
// "not yet due" ([-1, due]) whenever the Redis clock is still before due, and forward once after.
TEST_F(DeadlineGuardsTest, AClaimAFewMillisecondsBeforeTheDueTimeRepliesNotDue) {
  const KeyLayout keys("guard");  // no relay serves this namespace: only this test claims
  const std::string stream = keys.default_stream();
  int just_before = 0;  // claims answered within 5 ms before a due time
  for (int attempt = 0; attempt < 20 && just_before < 3; ++attempt) {
    const std::string id = "edge-" + std::to_string(attempt);
    const long long due = redis_now_ms(redis_) + 60;
    ASSERT_NO_FATAL_FAILURE(schedule_at(redis_, {{id, due}}, keys));
    int forwarded = 0;
    while (forwarded == 0) {
      // TIME, the claim and TIME again, run back to back by MULTI: the claim's clock lies between.
      std::vector<Reply> replies;
      pipeline(redis_, {{"MULTI"}, {"TIME"}, claim_argv(keys, id, "test", stream, "workers"), {"TIME"}, {"EXEC"}},
               &replies);
      const Reply& exec = replies.back();
      ASSERT_EQ(exec.elements.size(), 3u) << exec.describe();
      const long long before_us = *time_reply_us(exec.elements[0]);
      const long long after_us = *time_reply_us(exec.elements[2]);
      const auto claim = decode_claim(exec.elements[1]);
      ASSERT_TRUE(claim.has_value()) << exec.elements[1].describe();
      if (after_us < due * 1000) {
        ASSERT_EQ(claim->outcome, ClaimResult::Outcome::NotDue)
            << id << " claimed " << (due * 1000 - after_us) << " us before its due time";
        EXPECT_EQ(claim->due_ms, due);
        if (due * 1000 - after_us <= 5000) ++just_before;
      } else if (before_us >= due * 1000) {
        ASSERT_EQ(claim->outcome, ClaimResult::Outcome::Forwarded) << id << " due and pending, but not claimed";
      }
      if (claim->outcome == ClaimResult::Outcome::Forwarded) ++forwarded;
      ASSERT_NE(claim->outcome, ClaimResult::Outcome::NotPending) << id << " vanished";
    }
  }
  EXPECT_GE(just_before, 3) << "too few claims landed in the last 5 ms before a due time (busy machine?)";
  for (const auto& e : xrange_all(redis_, stream)) {
    EXPECT_GE(std::stoll(e.at(entry_field::kFiredMs)), std::stoll(e.at(entry_field::kDueMs))) << e.at(entry_field::kId);
  }
}

// Bull and BullMQ kept one timer for the next job and missed an earlier job added behind it.
TEST_F(DeadlineGuardsTest, AOneSecondTaskScheduledAfterASixHourTaskFiresOnTime) {
  ASSERT_NO_FATAL_FAILURE(start_relay_r1());
  schedule_all(redis_, {{"six-hours", 6LL * 3600 * 1000, "late"}});
  const auto due = schedule_all(redis_, {{"one-second", 1000, "soon"}});
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) >= 1; }, 10s)) << relay_->output();
  const auto entries = xrange_all(redis_, kStream);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at(entry_field::kId), "one-second");
  const long long late = std::stoll(entries[0].at(entry_field::kFiredMs)) - due.at("one-second");
  EXPECT_GE(late, 0);
  EXPECT_LT(late, 500) << "the 1-s task waited behind the 6-h one";
  RecordProperty("lateness_ms", static_cast<int>(late));
  EXPECT_TRUE(zscore(redis_, "six-hours").has_value()) << "the 6-h task is no longer pending";
}

// Timers that overflow or truncate far due times fire at once or in a tight loop.
TEST_F(DeadlineGuardsTest, TasksDueInThirtyDaysAndTenYearsNeitherFireEarlyNorSpinTheTimer) {
  ASSERT_NO_FATAL_FAILURE(start_relay_r1());
  ASSERT_TRUE(wait_until([&] { return scrape(metrics_port_, "expiry_relay_sweep_batches_total") >= 1; }, 10s))
      << relay_->output();
  const long long now = redis_now_ms(redis_);
  const std::vector<Due> tasks = {{"ten-years", now + 3652LL * 24 * 3600 * 1000},
                                  {"thirty-days", now + 30LL * 24 * 3600 * 1000}};
  // Each one moves the schedule's head earlier, so each publishes a wake the relay acts on.
  ASSERT_NO_FATAL_FAILURE(schedule_at(redis_, tasks));
  ASSERT_TRUE(wait_until([&] { return scrape(metrics_port_, "expiry_relay_wakeups_total") >= 2; }, 10s))
      << relay_->output();

  // The window: 3 s on the Redis clock after the relay has armed its timer for both.
  const double sweeps_before = scrape(metrics_port_, "expiry_relay_sweep_batches_total");
  const double cpu_before = process_cpu_seconds(relay_->pid());
  const long long window_start = redis_now_ms(redis_);
  ASSERT_TRUE(wait_until([&] { return redis_now_ms(redis_) >= window_start + 3000; }, 10s, 50ms));
  const double sweeps = scrape(metrics_port_, "expiry_relay_sweep_batches_total") - sweeps_before;
  const double cpu = process_cpu_seconds(relay_->pid()) - cpu_before;
  RecordProperty("sweeps_in_3s", static_cast<int>(sweeps));
  RecordProperty("relay_cpu_ms_in_3s", static_cast<int>(cpu * 1000));
  // The default sweep interval is 10 s: one periodic sweep at most, plus the health probes.
  EXPECT_LT(sweeps, 5) << "the timer spins on a far due time";
  EXPECT_LT(cpu, 0.5) << "the relay is busy while idle";

  EXPECT_EQ(xlen(redis_), 0) << "a far task fired";
  for (const auto& t : tasks) {
    EXPECT_EQ(zscore(redis_, t.id), t.due_ms) << t.id << " is no longer pending at its due time";
    // The library agrees: not yet due.
    const auto claim = decode_claim(redis_.command(claim_argv(kKeys, t.id, "test", kStream, "workers")));
    ASSERT_TRUE(claim.has_value());
    EXPECT_EQ(claim->outcome, ClaimResult::Outcome::NotDue) << t.id;
    EXPECT_EQ(claim->due_ms, t.due_ms) << t.id;
  }
  const auto sweep = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "test", "workers")));
  ASSERT_TRUE(sweep.has_value());
  EXPECT_EQ(sweep->forwarded, 0);
  EXPECT_EQ(sweep->next_due_ms, tasks[1].due_ms);
  EXPECT_EQ(sweep->pending, 2);
}

// A reschedule and the relay's claim at the due instant: the task moves or fires, not both.
TEST_F(DeadlineGuardsTest, ARescheduleRacingTheClaimAtTheDueInstantHasExactlyOneOutcome) {
  ASSERT_NO_FATAL_FAILURE(start_relay_r1());
  const int n = 300;
  const long long due = redis_now_ms(redis_) + 1500;
  std::vector<Due> tasks;
  for (int i = 0; i < n; ++i) tasks.push_back({"race-" + std::to_string(i), due});
  ASSERT_NO_FATAL_FAILURE(schedule_at(redis_, tasks));

  // Another client moves each task 30 s later, starting just before the due instant, in small
  // pipelines so the moves straddle it.
  std::vector<Reply> moves(n);
  std::thread mover([&] {
    TestConnection conn(server_.host(), server_.port());
    wait_until([&] { return redis_now_ms(conn) >= due - 10; }, 10s, 1ms);
    for (int start = 0; start < n; start += 10) {
      std::vector<std::vector<std::string>> cmds;
      for (int i = start; i < start + 10; ++i) cmds.push_back(reschedule_argv(kKeys, tasks[i].id, ScheduleMode::Delay, 30000));
      std::vector<Reply> replies;
      pipeline(conn, cmds, &replies);
      for (int i = 0; i < 10; ++i) moves[start + i] = replies[i];
    }
  });
  mover.join();

  int moved = 0;
  for (const auto& r : moves) {
    if (!r.failed()) {
      ++moved;
    } else {
      ASSERT_NE(r.str.find("not pending"), std::string::npos) << r.describe();
    }
  }
  ASSERT_TRUE(wait_until([&] { return xlen(redis_) >= n - moved; }, 15s))
      << xlen(redis_) << " entries, " << n - moved << " expected\n" << relay_->output();
  auto fired = entries_by_id(redis_);
  for (int i = 0; i < n; ++i) {
    const auto& id = tasks[i].id;
    const auto pending = zscore(redis_, id);
    const size_t entries = fired.count(id) ? fired[id].size() : 0;
    if (!moves[i].failed()) {
      EXPECT_EQ(entries, 0u) << id << " was moved and fired too";
      EXPECT_EQ(pending, decode_reschedule(moves[i])->due_ms) << id << " was moved but is not pending there";
    } else {
      EXPECT_EQ(entries, 1u) << id << " fired (the move said not pending) but is in the stream " << entries << " times";
      EXPECT_FALSE(pending.has_value()) << id << " fired and is still pending";
    }
  }
  EXPECT_EQ(xlen(redis_), n - moved) << "entries of unknown tasks";
  RecordProperty("moved", moved);
  RecordProperty("fired", n - moved);
}

// A cancel that reports "not pending" must mean the task's entry is in the stream, and a cancel
// that succeeded must mean it is not: the caller decides on that answer (refund or not).
TEST_F(DeadlineGuardsTest, CancelSaysNotPendingIfAndOnlyIfTheStreamHoldsTheEntryUnderARaceOfThousands) {
  ASSERT_NO_FATAL_FAILURE(start_relay_r1());
  const int n = 3000;
  const long long due = redis_now_ms(redis_) + 2000;
  std::vector<Due> tasks;
  for (int i = 0; i < n; ++i) tasks.push_back({"cancel-" + std::to_string(i), due + i / 10});  // over 300 ms
  ASSERT_NO_FATAL_FAILURE(schedule_at(redis_, tasks));

  // Another client cancels the tasks 50 at a time, each batch once the Redis clock reaches the
  // due time of its middle task: the relay is claiming the batch's earlier tasks meanwhile.
  std::vector<long long> cancelled(n, -1);
  std::thread canceller([&] {
    TestConnection conn(server_.host(), server_.port());
    for (int start = 0; start < n; start += 50) {
      wait_until([&] { return redis_now_ms(conn) >= tasks[start + 25].due_ms; }, 10s, 1ms);
      std::vector<std::vector<std::string>> cmds;
      for (int i = start; i < start + 50; ++i) cmds.push_back(cancel_argv(kKeys, tasks[i].id));
      std::vector<Reply> replies;
      pipeline(conn, cmds, &replies);
      for (int i = 0; i < 50; ++i) {
        if (replies[i].type == Reply::Type::Integer) cancelled[start + i] = replies[i].integer;
      }
    }
  });
  canceller.join();

  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0; }, 20s)) << zcard(redis_) << " still pending\n"
                                                                    << relay_->output();
  auto fired = entries_by_id(redis_);
  int said_cancelled = 0;
  for (int i = 0; i < n; ++i) {
    const auto& id = tasks[i].id;
    const size_t entries = fired.count(id) ? fired[id].size() : 0;
    ASSERT_TRUE(cancelled[i] == 0 || cancelled[i] == 1) << id << ": cancel failed";
    if (cancelled[i] == 1) {
      ++said_cancelled;
      EXPECT_EQ(entries, 0u) << id << ": cancel said cancelled, but it fired";
    } else {
      EXPECT_EQ(entries, 1u) << id << ": cancel said not pending, but the stream holds it " << entries << " times";
    }
  }
  EXPECT_EQ(xlen(redis_), n - said_cancelled);
  RecordProperty("cancelled", said_cancelled);
  RecordProperty("fired", n - said_cancelled);
}

// BullMQ and Sidekiq users found keys and memory that deleted or finished jobs left behind.
TEST_F(DeadlineGuardsTest, After200kScheduleReplaceCancelFireCyclesKeysAndMemoryReturnToBaseline) {
  ASSERT_NO_FATAL_FAILURE(start_relay_r1());
  redis_.command(load_library_argv());
  // The baseline: the relay's stream and group exist, empty; the schedule holds nothing.
  ASSERT_EQ(zcard(redis_), 0);
  redis_.command({"MEMORY", "PURGE"});
  const long long keys_before = dbsize(redis_);
  const long long memory_before = used_memory(redis_);

  // Rounds of 10k ids: each is scheduled, replaced (new payload), then cancelled (even ids) or
  // replaced once more with delay 0, so the relay fires it (odd ids).
  const int kCycles = 200000;
  const int kRound = 10000;
  const int kBatch = static_cast<int>(kMaxScheduleBatchTasks);
  const std::string payload_a(100, 'a');
  const std::string payload_b(100, 'b');
  const auto started = std::chrono::steady_clock::now();
  for (int round = 0; round < kCycles / kRound; ++round) {
    std::vector<std::string> ids;
    for (int i = 0; i < kRound; ++i) ids.push_back("cyc-" + std::to_string(round) + "-" + std::to_string(i));
    const auto schedule_pass = [&](auto pick) {  // pick(i) -> optional (delay, payload)
      std::vector<std::vector<std::string>> cmds;
      std::vector<ScheduleBatchTask> batch;
      for (int i = 0; i < kRound; ++i) {
        if (auto t = pick(i)) batch.push_back({ids[i], ScheduleMode::Delay, t->first, *t->second});
        if (batch.size() == static_cast<size_t>(kBatch) || (i == kRound - 1 && !batch.empty())) {
          cmds.push_back(schedule_many_argv(kKeys, batch, 0));
          batch.clear();
        }
      }
      pipeline(redis_, cmds);  // throws on an error reply
    };
    using Pick = std::optional<std::pair<long long, const std::string*>>;
    schedule_pass([&](int) -> Pick { return std::make_pair(60000LL, &payload_a); });
    schedule_pass([&](int) -> Pick { return std::make_pair(60000LL, &payload_b); });
    std::vector<std::vector<std::string>> cancels;
    for (int i = 0; i < kRound; i += 2) cancels.push_back(cancel_argv(kKeys, ids[i]));
    for (size_t start = 0; start < cancels.size(); start += 1000) {
      std::vector<std::vector<std::string>> window(cancels.begin() + start,
                                                   cancels.begin() + std::min(cancels.size(), start + 1000));
      std::vector<Reply> replies;
      pipeline(redis_, window, &replies);
      for (const auto& r : replies) ASSERT_EQ(r.integer, 1) << r.describe();
    }
    schedule_pass([&](int i) -> Pick {
      if (i % 2 == 0) return std::nullopt;
      return std::make_pair(0LL, &payload_b);
    });
  }
  const long long fired = kCycles / 2;
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) >= fired; }, 60s))
      << zcard(redis_) << " pending, " << xlen(redis_) << " fired\n" << relay_->output();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  EXPECT_EQ(xlen(redis_), fired) << "a task fired twice";

  // The fired tasks' entries legitimately stay in the stream: remove them, keep the stream.
  redis_.command({"XTRIM", kStream, "MAXLEN", "0"});
  redis_.command({"MEMORY", "PURGE"});
  // Redis shrinks its key tables in its cron and frees idle client buffers after a while:
  // wait for that, then compare.
  const long long kMemoryMargin = 1 << 20;
  long long memory_after = 0;
  long long keys_after = 0;
  wait_until(
      [&] {
        keys_after = dbsize(redis_);
        memory_after = used_memory(redis_);
        return keys_after == keys_before && memory_after <= memory_before + kMemoryMargin;
      },
      20s, 200ms);
  RecordProperty("cycles_ms", static_cast<int>(took.count()));
  RecordProperty("used_memory_before", std::to_string(memory_before));
  RecordProperty("used_memory_after", std::to_string(memory_after));
  std::cout << "200k cycles: " << took.count() << " ms; used_memory " << memory_before << " -> " << memory_after
            << " (" << memory_after - memory_before << " bytes); keys " << keys_before << " -> " << keys_after << "\n";
  EXPECT_EQ(keys_after, keys_before) << "keys left behind";
  EXPECT_LE(memory_after, memory_before + kMemoryMargin) << "memory left behind";
}

// Notifications set with CONFIG SET are gone after a restart that reads the config file: the
// tasks still fire through the sweep, and the relay says so in a warning and a metric.
TEST(DeadlineGuardsRestart, KeyspaceNotificationsLostInARedisRestartAreReportedAndTheSweepStillFires) {
  RedisServer::Options opts;
  opts.notify_expired = false;  // the config file says ""
  opts.extra_config_lines = {"appendonly yes", "appendfsync always"};
  RedisServer server(opts);
  {
    TestConnection redis(server.host(), server.port());
    redis.checked({"CONFIG", "SET", "notify-keyspace-events", "Ex"});
  }
  const int port = free_port();
  auto relay = start_relay(server, "r1", {"--metrics-port", std::to_string(port)});
  const std::string warning = "without E and x";
  {
    TestConnection redis(server.host(), server.port());
    ASSERT_NO_FATAL_FAILURE(wait_relay_ready(redis, "r1", *relay));
    ASSERT_TRUE(wait_until([&] { return scrape(port, "expiry_relay_keyspace_notifications") == 1; }, 10s))
        << http_get(port, "/metrics").body;
    schedule_all(redis, {{"before", 200, "b"}});
    ASSERT_TRUE(wait_until([&] { return xlen(redis) == 1; }, 10s)) << relay->output();
    EXPECT_EQ(relay->output().find(warning), std::string::npos) << relay->output();
  }

  server.stop();
  server.start();
  TestConnection redis(server.host(), server.port());
  ASSERT_EQ(redis.command({"CONFIG", "GET", "notify-keyspace-events"}).elements.at(1).str, "");
  ASSERT_TRUE(wait_until([&] { return scrape(port, "expiry_relay_keyspace_notifications") == 0; }, 15s))
      << http_get(port, "/metrics").body << relay->output();
  ASSERT_TRUE(wait_until([&] { return relay->output().find(warning) != std::string::npos; }, 10s))
      << relay->output();
  ASSERT_NO_FATAL_FAILURE(wait_relay_ready(redis, "r1", *relay));

  std::vector<Task> tasks;
  for (int i = 0; i < 20; ++i) tasks.push_back({"after-" + std::to_string(i), 300 + i * 50, "a"});
  const auto due = schedule_all(redis, tasks);
  ASSERT_TRUE(wait_until([&] { return xlen(redis) == 1 + static_cast<long long>(tasks.size()); }, 15s))
      << xlen(redis) << "\n" << relay->output();
  for (const auto& e : xrange_all(redis, kStream)) {
    const auto& id = e.at(entry_field::kId);
    if (id == "before") continue;
    EXPECT_EQ(e.at(entry_field::kVia), entry_field::kViaSweep) << id;
    EXPECT_LT(std::stoll(e.at(entry_field::kFiredMs)) - due.at(id), 1000) << id;
  }
  EXPECT_EQ(zcard(redis), 0);
}

}  // namespace
}  // namespace expiry::test
