// Integration tests of expiry-ctl's deadline commands against a private redis-server: schedule
// --if-absent / --debounce-max-ms / --max-late-ms / --traceparent (and in the bulk file, on both
// the batched and the one-task-per-call path), run-now (one task, and a range), pause and resume
// over several buckets with stats, and bulk cancel by prefix and due range.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "integration/ctl/ctl_run.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

constexpr const char* kTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr long long kFar = 4102444800000;  // 2100-01-01

class CtlDeadlineTest : public ::testing::Test {
 protected:
  CtlRun ctl(std::vector<std::string> args, const std::string& url = {}) {
    args.push_back("--redis-url=" + (url.empty() ? server_.url() : url));
    return run_ctl(args);
  }

  std::string write_file(const std::string& name, const std::string& content) { return scratch_.write(name, content); }

  // Uses `buckets` buckets (the key expiry-ctl and the relay agree on).
  void use_buckets(int buckets) {
    buckets_ = buckets;
    ASSERT_FALSE(redis_.command({"SET", "expiry:buckets", std::to_string(buckets)}).failed());
  }

  // The score of `id` in whichever bucket holds it, or nullopt.
  std::optional<long long> score(const std::string& id) {
    for (int b = 0; b < buckets_; ++b) {
      const Reply r = redis_.command({"ZSCORE", "expiry:{" + std::to_string(b) + "}:schedule", id});
      if (r.type == Reply::Type::String) return static_cast<long long>(std::stod(r.str));
    }
    return std::nullopt;
  }
  std::optional<std::string> hget(const std::string& id, const std::string& field) {
    const Reply r = redis_.command({"HGET", "expiry:{0}:task:" + id, field});
    if (r.type != Reply::Type::String) return std::nullopt;
    return r.str;
  }
  long long pending() {
    long long n = 0;
    for (int b = 0; b < buckets_; ++b) n += integer(redis_, {"ZCARD", "expiry:{" + std::to_string(b) + "}:schedule"});
    return n;
  }
  long long now_ms() {
    const Reply t = redis_.command({"TIME"});
    return std::stoll(t.elements.at(0).str) * 1000 + std::stoll(t.elements.at(1).str) / 1000;
  }
  nlohmann::json stats_json() {
    const CtlRun run = ctl({"stats", "--json"});
    EXPECT_EQ(run.exit_code, 0) << run.output;
    return nlohmann::json::parse(run.output);
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};

  // The keys but the audit trail (expiry:audit), which each write command appends to.
  long long keys_but_audit() { return integer(redis_, {"DBSIZE"}) - integer(redis_, {"EXISTS", "expiry:audit"}); }
  ScratchDir scratch_{"ctl_deadline"};
  const std::string& dir_ = scratch_.path();
  int buckets_ = 1;
};

TEST_F(CtlDeadlineTest, IfAbsentKeepsThePendingTaskPrintsKeptAndItsDueAndExitsZero) {
  const CtlRun first = ctl({"schedule", "pay-1", "--at-ms", std::to_string(kFar), "--if-absent", "--payload", "a"});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(contains(first.output, "scheduled pay-1 due_ms=" + std::to_string(kFar))) << "absent: created";

  const CtlRun again = ctl({"schedule", "pay-1", "--at-ms", std::to_string(kFar + 5000), "--if-absent", "--payload", "b"});
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "kept pay-1 due_ms=" + std::to_string(kFar))) << again.output;
  EXPECT_EQ(score("pay-1"), kFar);
  EXPECT_EQ(hget("pay-1", "payload"), "a") << "the kept task is untouched";

  const CtlRun replace = ctl({"schedule", "pay-1", "--at-ms", std::to_string(kFar + 5000), "--payload", "c"});
  EXPECT_EQ(replace.exit_code, 0) << replace.output;
  EXPECT_EQ(score("pay-1"), kFar + 5000) << "replace stays the default";
}

// The issue's example on the task's own times: delay 5 s, max 8 s, called again at +4 s and +6 s
// (as due times +9 s and +11 s): due at +8 s. An earlier due time is taken as it is.
TEST_F(CtlDeadlineTest, DebounceNeverMovesTheDuePastTheFirstSchedulePlusTheMaximum) {
  ASSERT_EQ(ctl({"schedule", "cart-1", "--delay-ms", "5000", "--debounce-max-ms", "8000"}).exit_code, 0);
  const long long first = std::stoll(hget("cart-1", "first_ms").value_or(hget("cart-1", "created_ms").value_or("0")));
  ASSERT_GT(first, 0);
  EXPECT_EQ(score("cart-1"), first + 5000);

  for (long long call_at : {4000LL, 6000LL}) {
    const CtlRun run = ctl({"schedule", "cart-1", "--at-ms", std::to_string(first + call_at + 5000),
                            "--debounce-max-ms", "8000"});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(contains(run.output, "due_ms=" + std::to_string(first + 8000))) << run.output;
    EXPECT_EQ(score("cart-1"), first + 8000) << "call at +" << call_at;
    EXPECT_EQ(hget("cart-1", "first_ms"), std::to_string(first)) << "the first schedule time is kept";
  }
  ASSERT_EQ(ctl({"schedule", "cart-1", "--at-ms", std::to_string(first + 1000), "--debounce-max-ms", "8000"}).exit_code, 0);
  EXPECT_EQ(score("cart-1"), first + 1000);
}

// The same with real time between the calls, scaled down: delay 500 ms, max 800 ms, called again
// at >= +400 ms and >= +600 ms (Redis clock): due = first + 800 ms.
TEST_F(CtlDeadlineTest, DebounceWithDelaysCalledLaterStaysAtTheFirstPlusTheMaximum) {
  ASSERT_EQ(ctl({"schedule", "cart-2", "--delay-ms", "500", "--debounce-max-ms", "800"}).exit_code, 0);
  const long long first = std::stoll(hget("cart-2", "first_ms").value_or(hget("cart-2", "created_ms").value_or("0")));
  ASSERT_GT(first, 0);
  for (long long gap : {400LL, 600LL}) {
    ASSERT_TRUE(wait_until([&] { return now_ms() >= first + gap; }, std::chrono::seconds(10)));
    const CtlRun run = ctl({"schedule", "cart-2", "--delay-ms", "500", "--debounce-max-ms", "800"});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(score("cart-2"), first + 800) << "called at >= +" << gap << " ms";
  }
}

TEST_F(CtlDeadlineTest, MaxLateAndTraceparentAreStoredAndShown) {
  const CtlRun run = ctl({"schedule", "remind-1", "--delay-ms", "600000", "--max-late-ms", "1500", "--traceparent", kTrace});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(hget("remind-1", "max_late_ms"), "1500");
  EXPECT_EQ(hget("remind-1", "traceparent"), kTrace);

  const CtlRun text = ctl({"show", "remind-1"});
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "max_late_ms: 1500\n")) << text.output;
  EXPECT_TRUE(contains(text.output, std::string("traceparent: ") + kTrace + "\n")) << text.output;
  const CtlRun json = ctl({"show", "remind-1", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  EXPECT_EQ(j.at("max_late_ms"), 1500);
  EXPECT_EQ(j.at("traceparent"), kTrace);
}

TEST_F(CtlDeadlineTest, BadOptionsExitTwoAndWriteNothing) {
  const std::vector<std::vector<std::string>> bad = {
      {"schedule", "a", "--delay-ms", "1", "--traceparent", "not-a-trace"},
      {"schedule", "a", "--delay-ms", "1", "--traceparent", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"},
      {"schedule", "a", "--delay-ms", "1", "--traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"},
      {"schedule", "a", "--delay-ms", "1", "--if-absent", "--debounce-max-ms", "10"},
      {"schedule", "a", "--delay-ms", "1", "--debounce-max-ms", "0"},
      {"schedule", "a", "--delay-ms", "1", "--max-late-ms", "-1"},
  };
  for (const auto& args : bad) {
    const CtlRun run = ctl(args);
    EXPECT_EQ(run.exit_code, 2) << args.back() << ": " << run.output;
  }
  const CtlRun trace = ctl(bad[0]);
  EXPECT_TRUE(contains(trace.output, "traceparent must be W3C trace context")) << trace.output;
  EXPECT_EQ(keys_but_audit(), 0);
}

// The bulk file's option fields, through expiry_schedule_many and, for a user who may call only
// expiry_v2_schedule, one task per call: the same outcome and the same summary.
TEST_F(CtlDeadlineTest, BulkFileOptionsOnTheBatchedAndTheOneTaskPath) {
  ASSERT_FALSE(redis_.command({"ACL", "SETUSER", "single", "on", ">pw", "~*", "&*", "+@all", "-fcall",
                               "+fcall|expiry_v2_schedule", "+fcall|expiry_version"}).failed());
  const std::string single_url =
      "redis://single:pw@" + server_.host() + ":" + std::to_string(server_.port());
  for (const std::string& url : {std::string(), single_url}) {
    SCOPED_TRACE(url.empty() ? "batched" : "one task per call");
    ASSERT_FALSE(redis_.command({"FLUSHALL"}).failed());
    ASSERT_EQ(ctl({"schedule", "k", "--at-ms", std::to_string(kFar), "--payload", "old"}).exit_code, 0);
    ASSERT_EQ(ctl({"schedule", "d", "--delay-ms", "600000", "--debounce-max-ms", "700000"}).exit_code, 0);
    const long long first = std::stoll(hget("d", "first_ms").value_or(hget("d", "created_ms").value_or("0")));
    const std::string file = write_file(
        "options.jsonl",
        "{\"id\":\"k\",\"at_ms\":" + std::to_string(kFar + 1) + ",\"payload\":\"new\",\"if_absent\":true}\n"
        "{\"id\":\"fresh\",\"at_ms\":" + std::to_string(kFar) + ",\"if_absent\":true}\n"
        "{\"id\":\"d\",\"at_ms\":" + std::to_string(kFar) + ",\"debounce_max_ms\":700000}\n"
        "{\"id\":\"n\",\"delay_ms\":600000,\"max_late_ms\":250,\"traceparent\":\"" + kTrace + "\"}\n");
    const CtlRun run = ctl({"schedule", "--file", file}, url);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(contains(run.output, "scheduled 4 tasks (1 replaced, 1 kept)")) << run.output;
    EXPECT_EQ(score("k"), kFar);
    EXPECT_EQ(hget("k", "payload"), "old");
    EXPECT_EQ(score("fresh"), kFar);
    EXPECT_EQ(score("d"), first + 700000) << "debounced to the first schedule + 700 s";
    EXPECT_EQ(hget("n", "max_late_ms"), "250");
    EXPECT_EQ(hget("n", "traceparent"), kTrace);
  }

  const long long keys = keys_but_audit();
  const std::string bad = write_file(
      "bad.jsonl", "{\"id\":\"x\",\"delay_ms\":1}\n{\"id\":\"y\",\"delay_ms\":1,\"traceparent\":\"00-zz\"}\n"
                   "{\"id\":\"z\",\"delay_ms\":1,\"if_absent\":\"yes\"}\n");
  const CtlRun refused = ctl({"schedule", "--file", bad});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(contains(refused.output, "line 2: traceparent must be W3C trace context")) << refused.output;
  EXPECT_TRUE(contains(refused.output, "line 3: if_absent must be true or false")) << refused.output;
  EXPECT_EQ(keys_but_audit(), keys) << "nothing written";
}

TEST_F(CtlDeadlineTest, RunNowMakesOnePendingTaskDueNowAndSaysWhenItIsNotPending) {
  ASSERT_EQ(ctl({"schedule", "r1", "--at-ms", std::to_string(kFar), "--payload", "keep", "--stream", "own"}).exit_code, 0);
  const CtlRun run = ctl({"run-now", "r1"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "run-now r1 previous_due_ms=" + std::to_string(kFar) + " due_ms=")) << run.output;
  const auto due = score("r1");
  ASSERT_TRUE(due);
  EXPECT_LE(*due, now_ms());
  EXPECT_EQ(hget("r1", "promoted_from_ms"), std::to_string(kFar));
  EXPECT_TRUE(hget("r1", "promoted_ms"));
  EXPECT_EQ(hget("r1", "payload"), "keep");
  EXPECT_EQ(hget("r1", "stream"), "own");

  const CtlRun missing = ctl({"run-now", "nobody"});
  EXPECT_EQ(missing.exit_code, 3) << missing.output;
  EXPECT_TRUE(contains(missing.output, "not pending: nobody")) << missing.output;
  EXPECT_EQ(ctl({"run-now"}).exit_code, 2);
  EXPECT_EQ(ctl({"run-now", "r1", "--prefix", "r"}).exit_code, 2);
}

// More matching tasks than one call examines per bucket: the cursor loop promotes them all, and
// nothing outside the prefix or the bound.
TEST_F(CtlDeadlineTest, RunNowRangePromotesOnlyMatchingTasksOfEveryBucket) {
  use_buckets(4);
  std::string lines;
  for (int i = 0; i < 2500; ++i) lines += "{\"id\":\"p-" + std::to_string(i) + "\",\"delay_ms\":600000}\n";
  for (int i = 0; i < 200; ++i) lines += "{\"id\":\"q-" + std::to_string(i) + "\",\"delay_ms\":600000}\n";
  for (int i = 0; i < 50; ++i) lines += "{\"id\":\"p-later-" + std::to_string(i) + "\",\"at_ms\":" + std::to_string(kFar) + "}\n";
  ASSERT_EQ(ctl({"schedule", "--file", write_file("range.jsonl", lines)}).exit_code, 0);

  const CtlRun run = ctl({"run-now", "--due-before", "+3600000", "--prefix", "p-"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "promoted 2500 tasks")) << run.output;
  const long long now = now_ms();
  for (int i = 0; i < 2500; i += 97) EXPECT_LE(score("p-" + std::to_string(i)).value_or(kFar), now) << i;
  for (int i = 0; i < 200; i += 13) EXPECT_GT(score("q-" + std::to_string(i)).value_or(0), now) << i;
  for (int i = 0; i < 50; i += 7) EXPECT_EQ(score("p-later-" + std::to_string(i)), kFar) << i;
  long long due_now = 0;
  for (int b = 0; b < 4; ++b) {
    due_now += integer(redis_, {"ZCOUNT", "expiry:{" + std::to_string(b) + "}:schedule", "-inf", std::to_string(now)});
  }
  EXPECT_EQ(due_now, 2500);
}

TEST_F(CtlDeadlineTest, PauseAndResumeEveryBucketWithStats) {
  use_buckets(4);
  std::string lines;
  for (int i = 0; i < 12; ++i) lines += "{\"id\":\"o-" + std::to_string(i) + "\",\"at_ms\":1000}\n";
  for (int i = 0; i < 5; ++i) lines += "{\"id\":\"f-" + std::to_string(i) + "\",\"at_ms\":" + std::to_string(kFar) + "}\n";
  ASSERT_EQ(ctl({"schedule", "--file", write_file("held.jsonl", lines)}).exit_code, 0);
  auto before = stats_json();
  EXPECT_EQ(before.at("paused"), false);
  EXPECT_TRUE(before.at("paused_until_ms").is_null());
  EXPECT_EQ(before.at("overdue"), 12);

  const CtlRun pause = ctl({"pause"});
  ASSERT_EQ(pause.exit_code, 0) << pause.output;
  EXPECT_TRUE(contains(pause.output, "paused until resumed: 4 buckets, 17 pending, 12 overdue")) << pause.output;
  for (int b = 0; b < 4; ++b) {
    const Reply flag = redis_.command({"GET", "expiry:{" + std::to_string(b) + "}:paused"});
    EXPECT_EQ(flag.str, "0") << b;
  }
  auto paused = stats_json();
  EXPECT_EQ(paused.at("paused"), true);
  EXPECT_EQ(paused.at("paused_until_ms"), 0);
  EXPECT_EQ(paused.at("overdue"), 12);
  const CtlRun text = ctl({"stats"});
  EXPECT_TRUE(contains(text.output, "paused: true (4 of 4 buckets, until resumed)")) << text.output;

  const long long start = now_ms();
  const CtlRun timed = ctl({"pause", "--for", "5m"});
  ASSERT_EQ(timed.exit_code, 0) << timed.output;
  EXPECT_TRUE(contains(timed.output, "paused until 20")) << timed.output;
  for (int b = 0; b < 4; ++b) {
    const long long ttl = integer(redis_, {"PTTL", "expiry:{" + std::to_string(b) + "}:paused"});
    EXPECT_GT(ttl, 250000) << b;
    EXPECT_LE(ttl, 300000) << b;
  }
  const long long until = stats_json().at("paused_until_ms").get<long long>();
  EXPECT_GE(until, start + 300000);
  EXPECT_LE(until, now_ms() + 300000);

  const CtlRun resume = ctl({"resume"});
  ASSERT_EQ(resume.exit_code, 0) << resume.output;
  EXPECT_TRUE(contains(resume.output, "resumed: 4 of 4 buckets were paused; 12 overdue tasks are being forwarded"))
      << resume.output;
  for (int b = 0; b < 4; ++b) EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{" + std::to_string(b) + "}:paused"}), 0);
  auto after = stats_json();
  EXPECT_EQ(after.at("paused"), false);
  EXPECT_TRUE(after.at("paused_until_ms").is_null());
  const CtlRun again = ctl({"resume"});
  EXPECT_TRUE(contains(again.output, "resumed: 0 of 4 buckets were paused")) << again.output;

  for (const char* bad : {"0", "5x", "-1s", "1.5s", ""}) {
    const CtlRun refused = ctl({"pause", "--for", bad});
    EXPECT_EQ(refused.exit_code, 2) << bad << ": " << refused.output;
  }
  EXPECT_EQ(integer(redis_, {"EXISTS", "expiry:{0}:paused"}), 0) << "a refused pause writes nothing";
}

TEST_F(CtlDeadlineTest, BulkCancelByPrefixLeavesTheOthers) {
  use_buckets(4);
  std::string lines;
  for (int i = 0; i < 5000; ++i) lines += "{\"id\":\"acct-42-" + std::to_string(i) + "\",\"delay_ms\":600000}\n";
  for (int i = 0; i < 300; ++i) lines += "{\"id\":\"acct-7-" + std::to_string(i) + "\",\"delay_ms\":600000}\n";
  ASSERT_EQ(ctl({"schedule", "--file", write_file("cancel.jsonl", lines)}).exit_code, 0);
  ASSERT_EQ(pending(), 5300);

  const CtlRun run = ctl({"cancel", "--prefix", "acct-42-"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "cancelled 5000 tasks")) << run.output;
  EXPECT_EQ(pending(), 300);
  EXPECT_EQ(keys_but_audit(), 1 + 4 + 2 * 300) << "expiry:buckets, the schedules, two keys a task";
  EXPECT_TRUE(score("acct-7-0"));

  const CtlRun none = ctl({"cancel", "--prefix", "acct-42-"});
  EXPECT_TRUE(contains(none.output, "cancelled 0 tasks")) << none.output;
}

TEST_F(CtlDeadlineTest, BulkCancelByDueRangeWithExclusiveBounds) {
  std::string lines;
  for (int i = 1; i <= 10; ++i) {
    lines += "{\"id\":\"t" + std::to_string(i) + "\",\"at_ms\":" + std::to_string(kFar + i * 1000) + "}\n";
  }
  ASSERT_EQ(ctl({"schedule", "--file", write_file("due.jsonl", lines)}).exit_code, 0);
  const CtlRun run =
      ctl({"cancel", "--due-after", std::to_string(kFar + 3000), "--due-before", std::to_string(kFar + 7000)});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "cancelled 3 tasks")) << run.output;
  for (int i = 1; i <= 10; ++i) {
    EXPECT_EQ(score("t" + std::to_string(i)).has_value(), i <= 3 || i >= 7) << i;
  }
  const CtlRun relative = ctl({"cancel", "--due-before", "+600000"});
  EXPECT_TRUE(contains(relative.output, "cancelled 0 tasks")) << relative.output;
  EXPECT_EQ(pending(), 7);
  const CtlRun prefix_and_after = ctl({"cancel", "--prefix", "t1", "--due-after", std::to_string(kFar + 5000)});
  EXPECT_TRUE(contains(prefix_and_after.output, "cancelled 1 tasks")) << "t10 only: " << prefix_and_after.output;

  EXPECT_EQ(ctl({"cancel"}).exit_code, 2);
  EXPECT_EQ(ctl({"cancel", "t2", "--prefix", "t"}).exit_code, 2);
  EXPECT_EQ(ctl({"cancel", "--prefix", ""}).exit_code, 2);
  EXPECT_EQ(ctl({"cancel", "--due-before", "soon"}).exit_code, 2);
  EXPECT_EQ(ctl({"cancel", "t2"}).exit_code, 0) << "the single-task form still works";
  EXPECT_EQ(pending(), 5);
}

// A user whose ACL predates the pause flag (no access to expiry:{0}:paused) still gets stats,
// with the pause unknown.
TEST_F(CtlDeadlineTest, StatsWithoutAccessToThePauseFlagReportsItUnknown) {
  ASSERT_FALSE(redis_.command({"ACL", "SETUSER", "old-operator", "on", ">pw", "~expiry:{0}:schedule", "%R~expiry:stream",
                               "%R~expiry:buckets", "+@all"}).failed());
  const std::string url = "redis://old-operator:pw@" + server_.host() + ":" + std::to_string(server_.port());
  const CtlRun json = ctl({"stats", "--json"}, url);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output.substr(0, json.output.find('\n')));
  EXPECT_TRUE(j.at("paused").is_null());
  EXPECT_TRUE(j.at("paused_until_ms").is_null());
  const CtlRun text = ctl({"stats"}, url);
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "paused: unknown")) << text.output;
}

}  // namespace
}  // namespace expiry::test
