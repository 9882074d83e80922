// The claim invariant (src/lua/expiry/keys.lua, docs/reliability.md): after any expiry_claim or
// expiry_sweep call, returned or failed, every task is either still pending (schedule member
// and shadow hash untouched, no entry anywhere) or forwarded (exactly one stream entry, member
// and keys gone). Each case below makes one of a claim's writes meet a refusal, on both the
// sweep and the event-claim path, and checks every task against the invariant; then it repairs
// the cause and checks that each task is forwarded exactly once.
#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"

namespace expiry::test {
namespace {

const KeyLayout kKeys("expiry");
const std::string kStream = "expiry:stream";
const std::string kGroup = "workers";
const std::string kMaxId = "18446744073709551615-18446744073709551615";

// Every stream key in the database (the per-task streams of a case are not known up front).
std::vector<std::string> all_streams(SyncConnection& redis) {
  std::vector<std::string> out;
  for (const auto& k : redis.command({"KEYS", "*"}).elements) {
    if (redis.command({"TYPE", k.str}).str == "stream") out.push_back(k.str);
  }
  return out;
}

struct TaskState {
  bool pending = false;
  std::vector<std::map<std::string, std::string>> entries;  // entries carrying this id, in every stream
};

std::map<std::string, TaskState> task_states(SyncConnection& redis, const std::vector<std::string>& ids) {
  std::map<std::string, TaskState> out;
  for (const auto& id : ids) out[id].pending = redis.command({"ZSCORE", kKeys.schedule_key(), id}).type != Reply::Type::Nil;
  for (const auto& stream : all_streams(redis)) {
    for (auto& e : xrange_all(redis, stream)) {
      auto it = e.find(entry_field::kId);
      if (it == e.end() || out.count(it->second) == 0) continue;
      e["_stream"] = stream;
      out[it->second].entries.push_back(e);
    }
  }
  return out;
}

// The invariant, for each task: pending with its shadow hash as scheduled and no entry, or
// forwarded once with its member, shadow hash and trigger key gone.
void expect_invariant(SyncConnection& redis, const std::map<std::string, std::string>& payloads, const std::string& when) {
  std::vector<std::string> ids;
  for (const auto& [id, _] : payloads) ids.push_back(id);
  for (const auto& [id, state] : task_states(redis, ids)) {
    SCOPED_TRACE(when + ", task " + id);
    if (state.pending) {
      EXPECT_TRUE(state.entries.empty()) << "pending and forwarded at once";
      auto shadow = redis.command({"HGET", kKeys.shadow_key(id), "payload"});
      EXPECT_EQ(shadow.str, payloads.at(id)) << "a pending task lost its shadow hash";
    } else {
      ASSERT_EQ(state.entries.size(), 1u) << "neither pending nor forwarded exactly once: the task is lost or doubled";
      EXPECT_EQ(state.entries[0].at(entry_field::kPayload), payloads.at(id));
      EXPECT_EQ(integer(redis, {"EXISTS", kKeys.shadow_key(id), kKeys.trigger_key(id)}), 0) << "keys left behind";
    }
  }
}

class ClaimInvariantTest : public ::testing::Test {
 protected:
  void SetUp() override { redis_.command(load_library_argv()); }

  // Schedules `id` already due (its trigger lives 100 ms), optionally for its own stream.
  void schedule_due(const std::string& id, const std::string& stream = "") {
    auto r = redis_.command(schedule_argv(kKeys, id, ScheduleMode::At, 1000, "payload-" + id, stream));
    ASSERT_FALSE(r.failed()) << r.describe();
    payloads_[id] = "payload-" + id;
  }
  Reply sweep() { return redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", kGroup)); }
  Reply claim(const std::string& id) { return redis_.command(claim_argv(kKeys, id, "event", kStream, kGroup)); }
  void exhaust(const std::string& stream) {
    redis_.command({"DEL", stream});
    ASSERT_FALSE(redis_.command({"XADD", stream, kMaxId, "filler", "1"}).failed());
  }
  bool pending(const std::string& id) {
    return redis_.command({"ZSCORE", kKeys.schedule_key(), id}).type != Reply::Type::Nil;
  }
  std::map<std::string, std::string> entry_of(const std::string& id) {
    auto states = task_states(redis_, {id});
    return states[id].entries.size() == 1 ? states[id].entries[0] : std::map<std::string, std::string>{};
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
  std::map<std::string, std::string> payloads_;
};

TEST_F(ClaimInvariantTest, DefaultStreamWithExhaustedIdsKeepsTasksPendingOnBothPaths) {
  exhaust(kStream);
  for (const char* id : {"a", "b", "c"}) schedule_due(id);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto r = sweep();
    ASSERT_TRUE(r.failed()) << r.describe();
    EXPECT_NE(r.str.find("exhausted"), std::string::npos) << r.str;
    EXPECT_NE(r.str.find("stays pending"), std::string::npos) << r.str;
    expect_invariant(redis_, payloads_, "after failed sweep " + std::to_string(attempt));
  }
  auto c = claim("b");
  ASSERT_TRUE(c.failed()) << c.describe();
  expect_invariant(redis_, payloads_, "after a failed event claim");
  for (const char* id : {"a", "b", "c"}) EXPECT_TRUE(pending(id)) << id;
  EXPECT_EQ(integer(redis_, {"XLEN", kStream}), 1) << "only the filler";

  // Repaired (the operator moves the stream away): every task is forwarded exactly once.
  redis_.command({"RENAME", kStream, "expiry:stream:exhausted"});
  auto r = sweep();
  ASSERT_FALSE(r.failed()) << r.describe();
  EXPECT_EQ(r.elements.at(0).integer, 3);
  expect_invariant(redis_, payloads_, "after the repair");
  expect_exactly_once(xrange_all(redis_, kStream), payloads_);
}

TEST_F(ClaimInvariantTest, PerTaskStreamWithExhaustedIdsFallsBackToTheDefaultStreamWithTheReason) {
  exhaust("orders:full");
  schedule_due("own", "orders:full");
  schedule_due("plain");
  auto c = claim("own");  // the event path
  ASSERT_FALSE(c.failed()) << c.describe();
  ASSERT_FALSE(sweep().failed());
  expect_invariant(redis_, payloads_, "after claim and sweep");
  auto e = entry_of("own");
  EXPECT_EQ(e["_stream"], kStream);
  EXPECT_EQ(e["undeliverable_stream"], "orders:full");
  EXPECT_NE(e["undeliverable_reason"].find("exhausted"), std::string::npos) << e["undeliverable_reason"];
  EXPECT_EQ(integer(redis_, {"XLEN", "orders:full"}), 1) << "only the filler";
  EXPECT_EQ(entry_of("plain").count(entry_field::kUndeliverableStream), 0u);
}

TEST_F(ClaimInvariantTest, AFailureMidSweepLeavesEarlierTasksForwardedAndTheRestPending) {
  // Two tasks for a healthy per-task stream come first (earlier due times), then tasks for the
  // default stream, whose ids are exhausted: the call fails at the third task.
  ASSERT_FALSE(redis_.command(schedule_argv(kKeys, "first", ScheduleMode::At, 10, "payload-first", "orders:ok")).failed());
  ASSERT_FALSE(redis_.command(schedule_argv(kKeys, "second", ScheduleMode::At, 11, "payload-second", "orders:ok")).failed());
  payloads_["first"] = "payload-first";
  payloads_["second"] = "payload-second";
  exhaust(kStream);
  schedule_due("third");
  schedule_due("fourth");
  auto r = sweep();
  ASSERT_TRUE(r.failed()) << r.describe();
  expect_invariant(redis_, payloads_, "after the failed sweep");
  EXPECT_FALSE(pending("first"));
  EXPECT_FALSE(pending("second"));
  EXPECT_TRUE(pending("third"));
  EXPECT_TRUE(pending("fourth"));
  EXPECT_EQ(integer(redis_, {"XLEN", "orders:ok"}), 2);
}

TEST_F(ClaimInvariantTest, EveryOtherRefusalKeepsTheInvariant) {
  struct Case {
    std::string name;
    std::string stream;                              // the task's own stream ("" = default)
    std::function<void(SyncConnection&)> break_it;        // makes a write meet a refusal
    bool stays_pending;                              // else: forwarded to the default stream, marked
  };
  const std::vector<Case> cases = {
      {"default stream holds a string", "", [](SyncConnection& r) { r.command({"SET", kStream, "x"}); }, true},
      {"per-task stream holds a hash", "orders:h", [](SyncConnection& r) { r.command({"HSET", "orders:h", "f", "v"}); },
       false},
      {"per-task stream inside the task key space (shadow hash edited by hand)", "",
       [](SyncConnection& r) { r.command({"HSET", kKeys.shadow_key("t"), "stream", kKeys.shadow_key("victim")}); }, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    redis_.command({"FLUSHALL"});
    redis_.command(load_library_argv());
    payloads_.clear();
    schedule_due("t", c.stream);
    c.break_it(redis_);
    for (bool event_path : {true, false}) {
      auto r = event_path ? claim("t") : sweep();
      EXPECT_EQ(r.failed(), c.stays_pending) << r.describe();
      expect_invariant(redis_, payloads_, event_path ? "after the claim" : "after the sweep");
    }
    EXPECT_EQ(pending("t"), c.stays_pending);
    if (!c.stays_pending) {
      auto e = entry_of("t");
      EXPECT_EQ(e["_stream"], kStream);
      EXPECT_FALSE(e["undeliverable_stream"].empty());
      EXPECT_FALSE(e["undeliverable_reason"].empty());
    }
  }
}

TEST_F(ClaimInvariantTest, ADefaultStreamInsideTheTaskKeySpaceIsRefusedBeforeAnyWrite) {
  schedule_due("t");
  schedule_due("victim");
  auto r = redis_.command(sweep_argv(kKeys, kKeys.shadow_key("victim"), 100, "sweep", kGroup));
  ASSERT_TRUE(r.failed()) << r.describe();
  EXPECT_NE(r.str.find("task key space"), std::string::npos) << r.str;
  auto c = redis_.command(claim_argv(kKeys, "t", "event", kKeys.shadow_key("victim"), kGroup));
  ASSERT_TRUE(c.failed()) << c.describe();
  expect_invariant(redis_, payloads_, "after the refused calls");
  EXPECT_TRUE(pending("t"));
  EXPECT_TRUE(pending("victim"));
}

TEST_F(ClaimInvariantTest, DeadLetteringIntoAnExhaustedStreamLeavesTheEntryPending) {
  schedule_due("poison");
  ASSERT_FALSE(sweep().failed());
  auto read = redis_.command({"XREADGROUP", "GROUP", kGroup, "c1", "COUNT", "1", "STREAMS", kStream, ">"});
  ASSERT_FALSE(read.failed()) << read.describe();
  const std::string entry_id = read.elements.at(0).elements.at(1).elements.at(0).elements.at(0).str;
  exhaust("expiry:stream:dead");
  auto r = redis_.command({"FCALL", "expiry_dead_letter", "2", kStream, "expiry:stream:dead", kGroup, entry_id,
                           "handler failed", "5"});
  ASSERT_TRUE(r.failed()) << r.describe();
  auto pel = redis_.command({"XPENDING", kStream, kGroup});
  EXPECT_EQ(pel.elements.at(0).integer, 1) << "the entry must stay pending, not be acknowledged";
  EXPECT_EQ(integer(redis_, {"XLEN", "expiry:stream:dead"}), 1) << "only the filler";
  redis_.command({"DEL", "expiry:stream:dead"});
  r = redis_.command({"FCALL", "expiry_dead_letter", "2", kStream, "expiry:stream:dead", kGroup, entry_id,
                      "handler failed", "5"});
  ASSERT_FALSE(r.failed()) << r.describe();
  EXPECT_EQ(integer(redis_, {"XLEN", "expiry:stream:dead"}), 1);
  EXPECT_EQ(redis_.command({"XPENDING", kStream, kGroup}).elements.at(0).integer, 0);
}

// The report's scenario, end to end: a relay meets a default stream whose ids are exhausted.
// Before the fix, 5 tasks became 0 pending and 0 entries within 4 s.
TEST_F(ClaimInvariantTest, ARelayFacingAnExhaustedStreamLosesNothingAndForwardsOnceRepaired) {
  auto relay = start_relay(server_, "r1", {"--sweep-interval-ms", "200"});
  wait_relay_ready(redis_, "r1", *relay);
  exhaust(kStream);
  std::vector<Task> tasks;
  for (int i = 0; i < 5; ++i) tasks.push_back({"x" + std::to_string(i), 100, "payload-x" + std::to_string(i)});
  schedule_all(redis_, tasks);
  for (const auto& t : tasks) payloads_[t.id] = t.payload;
  // Several failed sweeps and claims (events too: the triggers expire meanwhile).
  auto count = [&](const std::string& what) {
    const auto out = relay->output();
    size_t n = 0;
    for (size_t at = out.find(what); at != std::string::npos; at = out.find(what, at + 1)) ++n;
    return n;
  };
  ASSERT_TRUE(wait_until([&] { return count("stays pending") >= 5; }, 15s)) << relay->output();
  EXPECT_EQ(zcard(redis_), 5) << relay->output();
  expect_invariant(redis_, payloads_, "while the stream refuses XADD");
  EXPECT_TRUE(relay->running());
  redis_.command({"RENAME", kStream, "expiry:stream:exhausted"});
  ASSERT_TRUE(wait_until([&] { return zcard(redis_) == 0 && xlen(redis_) == 5; }, 10s)) << relay->output();
  expect_exactly_once(xrange_all(redis_, kStream), payloads_);
  EXPECT_EQ(redis_.command({"KEYS", "expiry:{0}:task:*"}).elements.size(), 0u) << "orphaned shadow hashes";
  EXPECT_EQ(relay->terminate(), 0);
}

}  // namespace
}  // namespace expiry::test
