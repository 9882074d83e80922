// The function names of the library on a real redis-server (docs/protocol.md, "Versions"):
// existing v1 callers keep working (every v1 name, with the v1 argument forms, answers in the
// shapes it always did), every v2 name answers in its one shape whatever was sent, and one
// library, expiry_v1, registers both.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

// How far ahead a test schedules a task it wants late: a task created after its due time is
// exempt from lateness limits (lateness_applies), and a busy machine can take tens of ms per call.
constexpr long long kCreatedBeforeDueMs = 1000;

using namespace std::chrono_literals;
using Strings = std::vector<std::string>;

const KeyLayout kKeys("expiry", 0);
const std::string kStream = "expiry:stream";
const std::string kDead = "expiry:stream:dead";
const std::string kGroup = "workers";
const std::string kFar = "4102444800000";  // 2100-01-01

// A reply's shape: "i" an integer, "s" a string, "[...]" an array of shapes, "E" an error, "nil".
std::string shape(const Reply& r) {
  switch (r.type) {
    case Reply::Type::Integer: return "i";
    case Reply::Type::String: return "s";
    case Reply::Type::Error: return "E";
    case Reply::Type::Array: {
      std::string out = "[";
      for (size_t i = 0; i < r.elements.size(); ++i) out += (i ? "," : "") + shape(r.elements[i]);
      return out + "]";
    }
    default: return "nil";
  }
}

class FunctionLibraryVersions : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(redis_.command(load_library_argv()).failed());
    ASSERT_FALSE(redis_.command({"XGROUP", "CREATE", kStream, kGroup, "0", "MKSTREAM"}).failed());
  }

  Reply call(Strings argv, const Strings& args) {
    argv.insert(argv.end(), args.begin(), args.end());
    return redis_.command(argv);
  }
  // FCALL <function> 3 <schedule> <trigger> <shadow> <id> <args...>: a call on one task.
  Reply on_task(const std::string& function, const std::string& id, const Strings& args = {}) {
    Strings argv{"FCALL", function, "3", kKeys.schedule_key(), kKeys.trigger_key(id), kKeys.shadow_key(id), id};
    return call(argv, args);
  }
  // FCALL <function> 4 <schedule> <trigger> <shadow> <stream> <id> via group [args...]: a claim.
  Reply claim(const std::string& function, const std::string& id, const Strings& args = {}) {
    return call({"FCALL", function, "4", kKeys.schedule_key(), kKeys.trigger_key(id), kKeys.shadow_key(id), kStream,
                 id, "event", kGroup},
                args);
  }
  Reply sweep(const std::string& function, const Strings& args = {}) {
    return call({"FCALL", function, "2", kKeys.schedule_key(), kStream, "100", "sweep", kGroup}, args);
  }
  Reply on_bucket(const std::string& function, const Strings& args) {
    return call({"FCALL", function, "1", kKeys.schedule_key()}, args);
  }
  Reply retry(const std::string& function, const std::string& entry, const std::string& id, const std::string& max) {
    return call({"FCALL", function, "5", kStream, kDead, kKeys.schedule_key(), kKeys.trigger_key(id),
                 kKeys.shadow_key(id)},
                {kGroup, entry, id, "0", max, "handler failed", "0"});
  }
  Reply dead_letter(const std::string& function, const std::string& entry) {
    return call({"FCALL", function, "2", kStream, kDead}, {kGroup, entry, "rejected", "3"});
  }
  Reply replay(const std::string& function, const std::string& dead_entry, const std::string& id) {
    return call({"FCALL", function, "4", kDead, kKeys.schedule_key(), kKeys.trigger_key(id), kKeys.shadow_key(id)},
                {dead_entry, id, "0", kStream});
  }

  long long now_ms() {
    const Reply t = redis_.command({"TIME"});
    return std::stoll(t.elements[0].str) * 1000 + std::stoll(t.elements[1].str) / 1000;
  }
  void wait_clock_past(long long ms) { ASSERT_TRUE(wait_until([&] { return now_ms() > ms; }, 30s)); }

  // The id of the entry of task `id` among the entries the group has not delivered yet, which
  // consumer "c" reads (they stay pending).
  std::string read_entry_of(const std::string& id) {
    const Reply read = redis_.command({"XREADGROUP", "GROUP", kGroup, "c", "STREAMS", kStream, ">"});
    EXPECT_EQ(shape(read).substr(0, 2), "[[") << read.describe();
    if (read.type != Reply::Type::Array || read.elements.empty()) return "";
    for (const Reply& entry : read.elements[0].elements[1].elements) {
      const auto& fields = entry.elements[1].elements;
      for (size_t i = 0; i + 1 < fields.size(); i += 2) {
        if (fields[i].str == "id" && fields[i + 1].str == id) return entry.elements[0].str;
      }
    }
    ADD_FAILURE() << "no new entry of task " << id << " in " << read.describe();
    return "";
  }

  // Schedules `id` due in the past, forwards it (v2 sweep) and reads it: its pending entry's id.
  std::string delivered(const std::string& id) {
    EXPECT_FALSE(on_task("expiry_v2_schedule", id, {"at", "1", "p-" + id}).failed());
    EXPECT_FALSE(sweep("expiry_v2_sweep").failed());
    return read_entry_of(id);
  }

  // A task due kCreatedBeforeDueMs from now with its own limit of 1 ms late, once it is later than that.
  void schedule_late(const std::string& function, const std::string& id) {
    const long long due = now_ms() + kCreatedBeforeDueMs;
    ASSERT_FALSE(on_task(function, id, {"at", std::to_string(due), "p", "", "0", "max_late_ms=1"}).failed());
    wait_clock_past(due + 20);
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(FunctionLibraryVersions, OneLibraryRegistersEveryV1AndV2Name) {
  const Reply list = redis_.command({"FUNCTION", "LIST"});
  ASSERT_EQ(list.type, Reply::Type::Array) << list.describe();
  ASSERT_EQ(list.elements.size(), 1u) << "one library";
  std::set<std::string> names;
  const Reply& library = list.elements[0];
  for (size_t i = 0; i + 1 < library.elements.size(); i += 2) {
    if (library.elements[i].str == "library_name") {
      EXPECT_EQ(library.elements[i + 1].str, "expiry_v1");
    }
    if (library.elements[i].str != "functions") continue;
    for (const Reply& f : library.elements[i + 1].elements) {
      for (size_t j = 0; j + 1 < f.elements.size(); j += 2) {
        if (f.elements[j].str == "name") names.insert(f.elements[j + 1].str);
      }
    }
  }
  std::set<std::string> want;
  for (const char* operation : {"schedule", "schedule_many", "reschedule", "cancel", "claim", "sweep", "dead_letter",
                                "trim", "replay_dead", "retry", "cancel_range", "run_now", "run_now_range", "pause",
                                "resume", "version"}) {
    want.insert(std::string("expiry_") + operation);
    want.insert(std::string("expiry_v2_") + operation);
  }
  // Recurring schedules came with v2 only.
  for (const char* operation : {"set", "get", "list", "delete", "pause", "resume", "refills", "refill"}) {
    want.insert(std::string("expiry_v2_recur_") + operation);
  }
  EXPECT_EQ(names, want);
  EXPECT_EQ(redis_.command({"FCALL", "expiry_v2_version", "0"}).integer, 2);
  EXPECT_EQ(redis_.command({"FCALL", "expiry_version", "0"}).integer, 2);
  EXPECT_EQ(redis_.command({"FCALL_RO", "expiry_version", "0"}).integer, 2);
}

TEST_F(FunctionLibraryVersions, ExistingV1CallersKeepWorking) {
  // Schedule, in each of its argument forms: {due_ms, replaced}.
  Reply r = on_task("expiry_schedule", "a", {"at", kFar, "p"});
  EXPECT_EQ(shape(r), "[i,i]") << r.describe();
  r = on_task("expiry_schedule", "a", {"at", kFar, "p", "", "0", "if_absent"});
  ASSERT_EQ(shape(r), "[i,i]") << r.describe();
  EXPECT_EQ(r.elements[1].integer, 2) << "kept";
  r = call({"FCALL", "expiry_schedule_many", "5", kKeys.schedule_key(), kKeys.trigger_key("b"), kKeys.shadow_key("b"),
            kKeys.trigger_key("c"), kKeys.shadow_key("c")},
           {"2", "b", "at", kFar, "p", "", "c", "delay", "600000", "p", "s:1", "0"});
  EXPECT_EQ(shape(r), "[i,i,i,i]") << r.describe();
  r = call({"FCALL", "expiry_schedule_many", "3", kKeys.schedule_key(), kKeys.trigger_key("b"), kKeys.shadow_key("b")},
           {"opts", "1", "b", "at", kFar, "p", "", "if_absent"});
  ASSERT_EQ(shape(r), "[i,i]") << r.describe();
  EXPECT_EQ(r.elements[1].integer, 2);
  r = on_task("expiry_reschedule", "b", {"at", kFar});
  EXPECT_EQ(shape(r), "[i,i]") << r.describe();
  EXPECT_EQ(on_task("expiry_cancel", "c").integer, 1);
  EXPECT_EQ(on_task("expiry_cancel", "c").integer, 0);
  r = on_bucket("expiry_cancel_range", {"", "", "b", "", "100"});
  ASSERT_EQ(shape(r), "[i,i,s]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1) << "b cancelled";

  // Run-now: {1, previous_due_ms, due_ms} or {0}; the range form {promoted, examined, cursor}.
  r = on_task("expiry_run_now", "a", {"0"});
  ASSERT_EQ(shape(r), "[i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[1].integer, std::stoll(kFar));
  r = on_task("expiry_run_now", "none");
  ASSERT_EQ(shape(r), "[i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 0);
  EXPECT_EQ(shape(on_bucket("expiry_run_now_range", {"", "", "", "100", "0"})), "[i,i,s]");

  // Paused: a claim without max_late_ms answers {0}, with it {-2, paused_until_ms}; a sweep
  // without it has seven elements, with it nine.
  r = on_bucket("expiry_pause", {"0"});
  ASSERT_EQ(shape(r), "[i,i,i]") << r.describe();
  r = claim("expiry_claim", "a");
  EXPECT_EQ(shape(r), "[i]") << r.describe();
  EXPECT_EQ(r.elements.at(0).integer, 0);
  r = claim("expiry_claim", "a", {"0"});
  ASSERT_EQ(shape(r), "[i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, -2);
  EXPECT_EQ(r.elements[1].integer, 0);
  r = sweep("expiry_sweep");
  EXPECT_EQ(shape(r), "[i,i,i,i,i,[],i]") << r.describe();
  r = sweep("expiry_sweep", {"0"});
  ASSERT_EQ(shape(r), "[i,i,i,i,i,[],i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[7].integer, 0) << "paused until resumed";
  r = on_bucket("expiry_resume", {"0"});
  ASSERT_EQ(shape(r), "[i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1);

  // Claims: {1, entry_id, lateness_ms}, {0}, {-1, due_ms}.
  r = claim("expiry_claim", "a");
  ASSERT_EQ(shape(r), "[i,s,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1);
  r = claim("expiry_claim", "a");
  EXPECT_EQ(shape(r), "[i]") << r.describe();
  ASSERT_FALSE(on_task("expiry_schedule", "far", {"at", kFar, "p"}).failed());
  r = claim("expiry_claim", "far");
  ASSERT_EQ(shape(r), "[i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, -1);
  EXPECT_EQ(r.elements[1].integer, std::stoll(kFar));

  // A task later than its own limit is dead-lettered: {0} without max_late_ms, {2, dead_entry_id,
  // lateness_ms} with it.
  schedule_late("expiry_schedule", "late-old");
  r = claim("expiry_claim", "late-old");
  EXPECT_EQ(shape(r), "[i]") << r.describe();
  EXPECT_EQ(r.elements.at(0).integer, 0);
  schedule_late("expiry_schedule", "late-new");
  r = claim("expiry_claim", "late-new", {"0"});
  ASSERT_EQ(shape(r), "[i,s,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 2);
  const std::string dead_entry = r.elements[1].str;
  EXPECT_EQ(xrange_all(redis_, kDead).size(), 2u) << "both late tasks are dead letters";

  // A sweep that forwards: seven elements, one lateness per task.
  ASSERT_FALSE(on_task("expiry_schedule", "swept", {"at", "1", "p"}).failed());
  r = sweep("expiry_sweep");
  ASSERT_EQ(shape(r), "[i,i,i,i,i,[i],i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1);

  // The consumers' calls.
  const std::string rejected = delivered("rejected");
  EXPECT_EQ(dead_letter("expiry_dead_letter", rejected).integer, 1);
  EXPECT_EQ(dead_letter("expiry_dead_letter", rejected).integer, 0);
  r = retry("expiry_retry", delivered("again"), "again", "5");
  ASSERT_EQ(shape(r), "[i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1);
  EXPECT_EQ(r.elements[2].integer, 2) << "next attempt";
  ASSERT_FALSE(sweep("expiry_v2_sweep").failed());
  const std::string second = read_entry_of("again");
  r = retry("expiry_retry", second, "again", "2");
  ASSERT_EQ(shape(r), "[i,s,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 2);
  EXPECT_EQ(r.elements[2].integer, 2) << "attempts";
  const std::string rescheduled = delivered("rescheduled");
  ASSERT_FALSE(on_task("expiry_schedule", "rescheduled", {"at", kFar, "p"}).failed());
  r = retry("expiry_retry", rescheduled, "rescheduled", "5");
  EXPECT_EQ(shape(r), "[i]") << r.describe();
  EXPECT_EQ(r.elements.at(0).integer, 3);
  r = retry("expiry_retry", rescheduled, "rescheduled", "5");
  EXPECT_EQ(shape(r), "[i]") << r.describe();
  EXPECT_EQ(r.elements.at(0).integer, 0);
  r = replay("expiry_replay_dead", dead_entry, "late-new");
  EXPECT_EQ(shape(r), "[i,i]") << r.describe();
  r = call({"FCALL", "expiry_trim", "1", kStream}, {"0", "100"});
  EXPECT_EQ(shape(r), "[i,i,i,s]") << r.describe();
  EXPECT_EQ(redis_.command({"FCALL", "expiry_version", "0"}).integer, 2);
}

TEST_F(FunctionLibraryVersions, EveryV2FunctionAnswersInItsOneShape) {
  Reply r = on_task("expiry_v2_schedule", "a", {"at", kFar, "p"});
  EXPECT_EQ(shape(r), "[i,i]") << r.describe();
  r = on_task("expiry_v2_schedule", "a", {"at", kFar, "p", "", "0", "if_absent"});
  ASSERT_EQ(shape(r), "[i,i]") << r.describe();
  EXPECT_EQ(r.elements[1].integer, 2);
  r = call({"FCALL", "expiry_v2_schedule_many", "5", kKeys.schedule_key(), kKeys.trigger_key("b"),
            kKeys.shadow_key("b"), kKeys.trigger_key("c"), kKeys.shadow_key("c")},
           {"opts", "2", "b", "at", kFar, "p", "", "", "c", "delay", "600000", "p", "s:1", "if_absent", "0"});
  EXPECT_EQ(shape(r), "[i,i,i,i]") << r.describe();
  EXPECT_EQ(shape(on_task("expiry_v2_reschedule", "b", {"at", kFar, "0"})), "[i,i]");
  EXPECT_EQ(on_task("expiry_v2_cancel", "c").integer, 1);
  EXPECT_EQ(on_task("expiry_v2_cancel", "c").integer, 0);
  EXPECT_EQ(shape(on_bucket("expiry_v2_cancel_range", {"", "", "b", "", "100"})), "[i,i,s]");

  // Run-now: {pending, previous_due_ms, due_ms} either way.
  r = on_task("expiry_v2_run_now", "a", {"0"});
  ASSERT_EQ(shape(r), "[i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1);
  r = on_task("expiry_v2_run_now", "none");
  ASSERT_EQ(shape(r), "[i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 0);
  EXPECT_EQ(r.elements[1].integer, -1);
  EXPECT_EQ(shape(on_bucket("expiry_v2_run_now_range", {"", "", "", "100", "0"})), "[i,i,s]");

  // Claim: {outcome, entry_id, lateness_ms, due_ms, paused_until_ms}, with or without max_late_ms.
  // Sweep: nine elements, with or without it.
  EXPECT_EQ(shape(on_bucket("expiry_v2_pause", {"0"})), "[i,i,i]");
  for (const Strings& limit : {Strings{}, Strings{"0"}}) {
    SCOPED_TRACE(limit.empty() ? "without max_late_ms" : "with max_late_ms");
    r = claim("expiry_v2_claim", "a", limit);
    ASSERT_EQ(shape(r), "[i,s,i,i,i]") << r.describe();
    EXPECT_EQ(r.elements[0].integer, -2);
    EXPECT_EQ(r.elements[4].integer, 0) << "paused until resumed";
    const auto decoded = decode_claim(r);
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->outcome, ClaimResult::Outcome::Paused);
    r = sweep("expiry_v2_sweep", limit);
    ASSERT_EQ(shape(r), "[i,i,i,i,i,[],i,i,i]") << r.describe();
    EXPECT_EQ(r.elements[7].integer, 0);
  }
  EXPECT_EQ(shape(on_bucket("expiry_v2_resume", {"0"})), "[i,i,i]");
  r = claim("expiry_v2_claim", "a");
  ASSERT_EQ(shape(r), "[i,s,i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1);
  EXPECT_FALSE(r.elements[1].str.empty());
  EXPECT_EQ(r.elements[4].integer, -1);
  r = claim("expiry_v2_claim", "a");
  ASSERT_EQ(shape(r), "[i,s,i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 0);
  EXPECT_EQ(r.elements[3].integer, -1) << "not pending: no due time";
  ASSERT_FALSE(on_task("expiry_v2_schedule", "far", {"at", kFar, "p"}).failed());
  r = claim("expiry_v2_claim", "far");
  ASSERT_EQ(shape(r), "[i,s,i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, -1);
  EXPECT_EQ(r.elements[3].integer, std::stoll(kFar));
  // A task later than its own limit is dead-lettered and says so, with or without max_late_ms.
  schedule_late("expiry_v2_schedule", "late");
  r = claim("expiry_v2_claim", "late");
  ASSERT_EQ(shape(r), "[i,s,i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 2);
  const std::string dead_entry = r.elements[1].str;
  ASSERT_FALSE(on_task("expiry_v2_schedule", "swept", {"at", "1", "p"}).failed());
  r = sweep("expiry_v2_sweep");
  ASSERT_EQ(shape(r), "[i,i,i,i,i,[i],i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[7].integer, -1) << "not paused";
  EXPECT_TRUE(decode_sweep(r));

  // The consumers' calls. Retry: {outcome, due_ms, attempt, dead_entry_id} whatever happened.
  const std::string rejected = delivered("rejected");
  EXPECT_EQ(dead_letter("expiry_v2_dead_letter", rejected).integer, 1);
  EXPECT_EQ(dead_letter("expiry_v2_dead_letter", rejected).integer, 0);
  r = retry("expiry_v2_retry", delivered("again"), "again", "5");
  ASSERT_EQ(shape(r), "[i,i,i,s]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1);
  EXPECT_EQ(r.elements[2].integer, 2) << "next attempt";
  EXPECT_EQ(r.elements[3].str, "");
  ASSERT_FALSE(sweep("expiry_v2_sweep").failed());
  const std::string second = read_entry_of("again");
  r = retry("expiry_v2_retry", second, "again", "2");
  ASSERT_EQ(shape(r), "[i,i,i,s]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 2);
  EXPECT_EQ(r.elements[1].integer, -1);
  EXPECT_EQ(r.elements[2].integer, 2) << "attempts";
  EXPECT_FALSE(r.elements[3].str.empty());
  const std::string rescheduled = delivered("rescheduled");
  ASSERT_FALSE(on_task("expiry_v2_schedule", "rescheduled", {"at", kFar, "p"}).failed());
  r = retry("expiry_v2_retry", rescheduled, "rescheduled", "5");
  ASSERT_EQ(shape(r), "[i,i,i,s]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 3);
  r = retry("expiry_v2_retry", rescheduled, "rescheduled", "5");
  ASSERT_EQ(shape(r), "[i,i,i,s]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 0);
  EXPECT_EQ(shape(replay("expiry_v2_replay_dead", dead_entry, "late")), "[i,i]");
  EXPECT_EQ(shape(call({"FCALL", "expiry_v2_trim", "1", kStream}, {"0", "100"})), "[i,i,i,s]");
  EXPECT_EQ(redis_.command({"FCALL_RO", "expiry_v2_version", "0"}).integer, 2);
}

// A v1 and a v2 name of one operation act on the same tasks: what one schedules the other sees.
TEST_F(FunctionLibraryVersions, BothNamesActOnTheSameTasks) {
  ASSERT_FALSE(on_task("expiry_schedule", "shared", {"at", "1", "p"}).failed());
  const Reply r = claim("expiry_v2_claim", "shared", {"0"});
  ASSERT_EQ(shape(r), "[i,s,i,i,i]") << r.describe();
  EXPECT_EQ(r.elements[0].integer, 1);
  EXPECT_EQ(claim("expiry_claim", "shared").elements.at(0).integer, 0) << "claimed once";
  ASSERT_FALSE(on_task("expiry_v2_schedule", "other", {"at", kFar, "p"}).failed());
  EXPECT_EQ(on_task("expiry_cancel", "other").integer, 1);
  EXPECT_EQ(on_task("expiry_v2_cancel", "other").integer, 0);
}

}  // namespace
}  // namespace expiry::test
