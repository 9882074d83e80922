// Unit tests of the FCALL argument lists and reply decoders of the expiry_v1 library's v2 functions
// (src/functions/function_library.h), checked against the KEYS/ARGV layout and the one reply shape
// that src/lua/expiry/*.lua documents for each function.
#include "functions/function_library.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace expiry {
namespace {

using Argv = std::vector<std::string>;

Reply integer(long long v) { return Reply::of_integer(v); }

Reply bulk(std::string s) { return Reply::of(Reply::Type::String, std::move(s)); }

Reply status(std::string s) { return Reply::of(Reply::Type::Status, std::move(s)); }

Reply error(std::string s) { return Reply::of(Reply::Type::Error, std::move(s)); }

Reply nil() { return Reply{}; }

Reply array(std::vector<Reply> elements) { return Reply::of_array(std::move(elements)); }

// ---------------------------------------------------------------- library source

TEST(FunctionLibrary, SourceIsTheEmbeddedLuaLibrary) {
  const std::string& src = function_library_source();
  EXPECT_EQ(src.rfind("#!lua name=expiry_v1", 0), 0u) << src.substr(0, 40);
  EXPECT_STREQ(kLibraryName, "expiry_v1");
  for (const char* operation : {"schedule", "schedule_many", "reschedule", "cancel", "claim", "sweep", "dead_letter",
                                "trim", "replay_dead", "retry", "cancel_range", "run_now", "run_now_range", "pause",
                                "resume", "version"}) {
    // Each name registered once: the v2 name, and the deprecated v1 name.
    const std::string v2 = std::string("'expiry_v2_") + operation + "'";
    const std::string v1 = std::string("'expiry_") + operation + "'";
    for (const std::string& name : {v2, v1}) {
      const std::string registration = std::string(operation) == "version"
                                           ? "redis.register_function{function_name = " + name + ","
                                           : "redis.register_function(" + name + ",";
      EXPECT_NE(src.find(registration), std::string::npos) << name;
      EXPECT_EQ(src.find(registration), src.rfind(registration)) << name;
    }
  }
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The embedded source is the generated src/generated/expiry.lua of the build tree (the file
// `cmake --install` installs), and holds every part of src/lua/expiry/: keys.lua first, with the
// claim invariant, and register.lua last.
TEST(FunctionLibrary, SourceIsTheGeneratedFileMadeOfEveryPart) {
  const std::string& src = function_library_source();
  EXPECT_EQ(src, file_text(EXPIRY_LUA_LIBRARY_FILE));
  const std::filesystem::path parts(EXPIRY_LUA_PARTS_DIR);
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(parts)) {
    if (entry.path().extension() != ".lua") continue;
    ++count;
    const std::string text = file_text(entry.path());
    ASSERT_FALSE(text.empty()) << entry.path();
    EXPECT_NE(src.find(text), std::string::npos) << entry.path() << " is not in the library";
  }
  EXPECT_GE(count, 2);
  const std::string first = file_text(parts / "keys.lua");
  const std::string last = file_text(parts / "register.lua");
  EXPECT_EQ(src.rfind(first, 0), 0u);
  EXPECT_NE(first.find("The claim invariant"), std::string::npos);
  ASSERT_GE(src.size(), last.size());
  EXPECT_EQ(src.substr(src.size() - last.size()), last);
}

TEST(FunctionLibrary, LoadArgv) {
  const Argv argv = load_library_argv();
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_EQ(argv[0], "FUNCTION");
  EXPECT_EQ(argv[1], "LOAD");
  EXPECT_EQ(argv[2], "REPLACE");
  EXPECT_EQ(argv[3], function_library_source());
}

// ---------------------------------------------------------------- argv builders

// expiry_v2_schedule KEYS: schedule, trigger, shadow  ARGV: id, 'delay'|'at', ms, payload[, stream]
TEST(FunctionLibrary, ScheduleDelayArgv) {
  KeyLayout keys("expiry");
  EXPECT_EQ(schedule_argv(keys, "job:1", ScheduleMode::Delay, 1500, "{\"a\":1}"),
            (Argv{"FCALL", "expiry_v2_schedule", "3", "expiry:{0}:schedule", "expiry:{0}:t:job:1",
                  "expiry:{0}:task:job:1", "job:1", "delay", "1500", "{\"a\":1}"}));
}

TEST(FunctionLibrary, ScheduleAtArgv) {
  KeyLayout keys("ns");
  EXPECT_EQ(schedule_argv(keys, "x", ScheduleMode::At, 1700000000123LL, ""),
            (Argv{"FCALL", "expiry_v2_schedule", "3", "ns:{0}:schedule", "ns:{0}:t:x", "ns:{0}:task:x", "x", "at",
                  "1700000000123", ""}));
}

TEST(FunctionLibrary, ScheduleWithStreamAppendsIt) {
  KeyLayout keys("expiry");
  EXPECT_EQ(schedule_argv(keys, "j", ScheduleMode::Delay, 0, "p", "billing:stream"),
            (Argv{"FCALL", "expiry_v2_schedule", "3", "expiry:{0}:schedule", "expiry:{0}:t:j", "expiry:{0}:task:j",
                  "j", "delay", "0", "p", "billing:stream"}));
  EXPECT_EQ(schedule_argv(keys, "j", ScheduleMode::At, 5, "p", "s"),
            (Argv{"FCALL", "expiry_v2_schedule", "3", "expiry:{0}:schedule", "expiry:{0}:t:j", "expiry:{0}:task:j",
                  "j", "at", "5", "p", "s"}));
}

TEST(FunctionLibrary, ScheduleWithEmptyStreamOmitsIt) {
  KeyLayout keys("expiry");
  EXPECT_EQ(schedule_argv(keys, "j", ScheduleMode::Delay, 10, "p", "").size(), 10u);
  EXPECT_EQ(schedule_argv(keys, "j", ScheduleMode::Delay, 10, "p").size(), 10u);
}

// With a database: the stream ('' for the default one) and the database follow the payload.
TEST(FunctionLibrary, ScheduleWithDatabaseAppendsStreamAndDatabase) {
  KeyLayout keys("expiry");
  EXPECT_EQ(schedule_argv(keys, "j", ScheduleMode::Delay, 10, "p", "", 3),
            (Argv{"FCALL", "expiry_v2_schedule", "3", "expiry:{0}:schedule", "expiry:{0}:t:j", "expiry:{0}:task:j",
                  "j", "delay", "10", "p", "", "3"}));
  EXPECT_EQ(schedule_argv(keys, "j", ScheduleMode::At, 5, "p", "s", 0),
            (Argv{"FCALL", "expiry_v2_schedule", "3", "expiry:{0}:schedule", "expiry:{0}:t:j", "expiry:{0}:task:j",
                  "j", "at", "5", "p", "s", "0"}));
}

TEST(FunctionLibrary, RescheduleArgvWithAndWithoutDatabase) {
  KeyLayout keys("ns");
  EXPECT_EQ(reschedule_argv(keys, "x", ScheduleMode::At, 7),
            (Argv{"FCALL", "expiry_v2_reschedule", "3", "ns:{0}:schedule", "ns:{0}:t:x", "ns:{0}:task:x", "x", "at",
                  "7"}));
  EXPECT_EQ(reschedule_argv(keys, "x", ScheduleMode::Delay, 7, 2),
            (Argv{"FCALL", "expiry_v2_reschedule", "3", "ns:{0}:schedule", "ns:{0}:t:x", "ns:{0}:task:x", "x", "delay",
                  "7", "2"}));
}

TEST(FunctionLibrary, ScheduleNumkeysMatchesTheKeys) {
  KeyLayout keys("expiry");
  const Argv argv = schedule_argv(keys, "j", ScheduleMode::Delay, 10, "p", "s");
  const int numkeys = std::stoi(argv[2]);
  EXPECT_EQ(numkeys, 3);
  // KEYS must all share the hash tag {0} so the FCALL runs on one slot.
  for (int i = 0; i < numkeys; ++i) EXPECT_EQ(argv[3 + i].rfind("expiry:{0}:", 0), 0u) << argv[3 + i];
  // ARGV: id, mode, ms, payload, stream.
  EXPECT_EQ(argv.size(), 3u + numkeys + 5u);
}

TEST(FunctionLibrary, SchedulePayloadAndIdAreVerbatim) {
  KeyLayout keys("expiry");
  const std::string id = "caf\xC3\xA9 {x}:y";
  static const char kPayload[] = "bin\0ary\n\"json\"";
  const std::string payload(kPayload, sizeof(kPayload) - 1);
  const Argv argv = schedule_argv(keys, id, ScheduleMode::At, 1, payload);
  EXPECT_EQ(argv[4], "expiry:{0}:t:" + id);
  EXPECT_EQ(argv[5], "expiry:{0}:task:" + id);
  EXPECT_EQ(argv[6], id);
  EXPECT_EQ(argv[9], payload);
  EXPECT_EQ(argv[9].size(), 14u);
}

// expiry_v2_cancel KEYS: schedule, trigger, shadow  ARGV: id
TEST(FunctionLibrary, CancelArgv) {
  KeyLayout keys("expiry");
  EXPECT_EQ(cancel_argv(keys, "a:b"), (Argv{"FCALL", "expiry_v2_cancel", "3", "expiry:{0}:schedule",
                                             "expiry:{0}:t:a:b", "expiry:{0}:task:a:b", "a:b"}));
}

// expiry_v2_claim KEYS: schedule, trigger, shadow, stream  ARGV: id, via, group, max_late_ms
TEST(FunctionLibrary, ClaimArgv) {
  KeyLayout keys("expiry");
  EXPECT_EQ(claim_argv(keys, "j1", "event", "expiry:stream", "workers"),
            (Argv{"FCALL", "expiry_v2_claim", "4", "expiry:{0}:schedule", "expiry:{0}:t:j1", "expiry:{0}:task:j1",
                  "expiry:stream", "j1", "event", "workers", "0"}));
  EXPECT_EQ(claim_argv(KeyLayout("b", 2), "x", "timer", "out", "g"),
            (Argv{"FCALL", "expiry_v2_claim", "4", "b:{2}:schedule", "b:{2}:t:x", "b:{2}:task:x", "out", "x", "timer",
                  "g", "0"}));
}

// With a dead-letter stream it is declared after the stream; the limit is always sent.
TEST(FunctionLibrary, ClaimArgvWithLimits) {
  EXPECT_EQ(claim_argv(KeyLayout("b", 2), "x", "event", "out", "g", {1500, "out:dead"}),
            (Argv{"FCALL", "expiry_v2_claim", "5", "b:{2}:schedule", "b:{2}:t:x", "b:{2}:task:x", "out", "out:dead",
                  "x", "event", "g", "1500"}));
}

// expiry_v2_sweep KEYS: schedule, stream  ARGV: limit, via, group, max_late_ms
TEST(FunctionLibrary, SweepArgv) {
  KeyLayout keys("expiry");
  EXPECT_EQ(sweep_argv(keys, "expiry:stream", 100, "sweep", "workers"),
            (Argv{"FCALL", "expiry_v2_sweep", "2", "expiry:{0}:schedule", "expiry:stream", "100", "sweep", "workers",
                  "0"}));
  EXPECT_EQ(sweep_argv(keys, "s", 7, "sweep", "g", {9, "d"}),
            (Argv{"FCALL", "expiry_v2_sweep", "3", "expiry:{0}:schedule", "s", "d", "7", "sweep", "g", "9"}));
  EXPECT_EQ(sweep_argv(keys, "s", 10000, "sweep", "g")[5], "10000");
  EXPECT_EQ(sweep_argv(keys, "s", 1, "sweep", "g")[5], "1");
}

// ---------------------------------------------------------------- is_function_missing

TEST(FunctionLibrary, IsFunctionMissing) {
  EXPECT_TRUE(is_function_missing(error("ERR Function not found")));
}

TEST(FunctionLibrary, IsFunctionMissingIgnoresOtherReplies) {
  EXPECT_FALSE(is_function_missing(error("ERR expiry: empty task id")));
  EXPECT_FALSE(is_function_missing(error("NOSCRIPT No matching script")));
  EXPECT_FALSE(is_function_missing(error("ERR unknown command 'FCALL'")));
  EXPECT_FALSE(is_function_missing(error("WRONGTYPE Operation against a key holding the wrong kind of value")));
  EXPECT_FALSE(is_function_missing(error("")));
  // The same text in a non-error reply is data, not an error.
  EXPECT_FALSE(is_function_missing(bulk("ERR Function not found")));
  EXPECT_FALSE(is_function_missing(status("ERR Function not found")));
  EXPECT_FALSE(is_function_missing(Reply::io_error("ERR Function not found")));
  EXPECT_FALSE(is_function_missing(nil()));
  EXPECT_FALSE(is_function_missing(integer(0)));
  EXPECT_FALSE(is_function_missing(array({error("ERR Function not found")})));
}

// ---------------------------------------------------------------- decode_schedule: {due_ms, replaced}

TEST(FunctionLibrary, DecodeScheduleNew) {
  auto r = decode_schedule(array({integer(1700000000123LL), integer(0)}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->due_ms, 1700000000123LL);
  EXPECT_FALSE(r->replaced);
}

TEST(FunctionLibrary, DecodeScheduleReplaced) {
  auto r = decode_schedule(array({integer(42), integer(1)}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->due_ms, 42);
  EXPECT_TRUE(r->replaced);
}

TEST(FunctionLibrary, DecodeRescheduleAcceptsOnlyTwoIntegers) {
  auto r = decode_reschedule(array({integer(1000), integer(900)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->due_ms, 1000);
  EXPECT_EQ(r->now_ms, 900);
  EXPECT_FALSE(decode_reschedule(error("ERR expiry: task a is not pending")));
  EXPECT_FALSE(decode_reschedule(array({integer(1000)})));
  EXPECT_FALSE(decode_reschedule(array({integer(1000), bulk("900")})));
}

TEST(FunctionLibrary, DecodeScheduleRejectsOtherShapes) {
  EXPECT_FALSE(decode_schedule(error("ERR expiry: empty task id")));
  EXPECT_FALSE(decode_schedule(Reply::io_error("connection lost")));
  EXPECT_FALSE(decode_schedule(nil()));
  EXPECT_FALSE(decode_schedule(integer(1)));
  EXPECT_FALSE(decode_schedule(bulk("1")));
  EXPECT_FALSE(decode_schedule(array({})));
  EXPECT_FALSE(decode_schedule(array({integer(1)})));
  EXPECT_FALSE(decode_schedule(array({integer(1), integer(0), integer(0)})));
  EXPECT_FALSE(decode_schedule(array({bulk("1"), integer(0)})));
  EXPECT_FALSE(decode_schedule(array({integer(1), bulk("0")})));
  EXPECT_FALSE(decode_schedule(array({integer(1), nil()})));
  EXPECT_FALSE(decode_schedule(array({nil(), integer(0)})));
  EXPECT_FALSE(decode_schedule(array({integer(1), error("ERR x")})));
}

// ------------------------- decode_claim: {outcome, entry_id, lateness_ms, due_ms, paused_until_ms}

Reply claim_reply(long long outcome, std::string entry_id, long long lateness, long long due, long long paused_until) {
  return array({integer(outcome), bulk(std::move(entry_id)), integer(lateness), integer(due), integer(paused_until)});
}

TEST(FunctionLibrary, DecodeClaimForwarded) {
  auto r = decode_claim(claim_reply(1, "1700000000123-0", 7, 1700000000116LL, -1));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->outcome, ClaimResult::Outcome::Forwarded);
  EXPECT_EQ(r->entry_id, "1700000000123-0");
  EXPECT_EQ(r->lateness_ms, 7);
  auto already_due = decode_claim(claim_reply(1, "5-0", -1, 3, -1));
  ASSERT_TRUE(already_due);
  EXPECT_EQ(already_due->lateness_ms, -1);
}

TEST(FunctionLibrary, DecodeClaimNotPending) {
  auto r = decode_claim(claim_reply(0, "", -1, -1, -1));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->outcome, ClaimResult::Outcome::NotPending);
}

TEST(FunctionLibrary, DecodeClaimNotDue) {
  auto r = decode_claim(claim_reply(-1, "", -1, 1700000005000LL, -1));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->outcome, ClaimResult::Outcome::NotDue);
  EXPECT_EQ(r->due_ms, 1700000005000LL);
}

TEST(FunctionLibrary, DecodeClaimRejectsErrorsAndNonArrays) {
  EXPECT_FALSE(decode_claim(error("ERR expiry: keys do not match the layout")));
  EXPECT_FALSE(decode_claim(error("ERR Function not found")));
  EXPECT_FALSE(decode_claim(Reply::io_error("timeout")));
  EXPECT_FALSE(decode_claim(nil()));
  EXPECT_FALSE(decode_claim(integer(1)));
  EXPECT_FALSE(decode_claim(bulk("1-0")));
  EXPECT_FALSE(decode_claim(status("OK")));
}

TEST(FunctionLibrary, DecodeClaimDeadLetteredAndPaused) {
  auto dead = decode_claim(claim_reply(2, "7-0", 900, 100, -1));
  ASSERT_TRUE(dead);
  EXPECT_EQ(dead->outcome, ClaimResult::Outcome::DeadLettered);
  EXPECT_EQ(dead->entry_id, "7-0");
  EXPECT_EQ(dead->lateness_ms, 900);
  auto paused = decode_claim(claim_reply(-2, "", -1, 100, 0));
  ASSERT_TRUE(paused);
  EXPECT_EQ(paused->outcome, ClaimResult::Outcome::Paused);
  EXPECT_EQ(paused->paused_until_ms, 0);
  auto timed = decode_claim(claim_reply(-2, "", -1, 100, 1700000009000LL));
  ASSERT_TRUE(timed);
  EXPECT_EQ(timed->paused_until_ms, 1700000009000LL);
}

TEST(FunctionLibrary, DecodeSweepReadsPauseAndLateCount) {
  auto r = decode_sweep(array({integer(1), integer(50), integer(40000), integer(3), integer(0), array({integer(7)}),
                               integer(0), integer(60), integer(2)}));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->paused_until_ms, 60);
  EXPECT_EQ(r->late, 2);
  EXPECT_FALSE(decode_sweep(array({integer(0), integer(50), integer(40000), integer(3), integer(0), array({}),
                                   integer(0), integer(60)})));
}

TEST(FunctionLibrary, RangeRunNowAndPauseArgvAndReplies) {
  const KeyLayout keys("ns", 3);
  EXPECT_EQ(cancel_range_argv(keys, {"order:", 10, std::nullopt}, "", 500),
            (Argv{"FCALL", "expiry_v2_cancel_range", "1", "ns:{3}:schedule", "10", "", "order:", "", "500"}));
  EXPECT_EQ(run_now_range_argv(keys, {"", std::nullopt, 99}, "5:1", 100, 0),
            (Argv{"FCALL", "expiry_v2_run_now_range", "1", "ns:{3}:schedule", "99", "", "5:1", "100", "0"}));
  EXPECT_EQ(run_now_argv(keys, "a"),
            (Argv{"FCALL", "expiry_v2_run_now", "3", "ns:{3}:schedule", "ns:{3}:t:a", "ns:{3}:task:a", "a", ""}));
  EXPECT_EQ(pause_argv(keys, 0), (Argv{"FCALL", "expiry_v2_pause", "1", "ns:{3}:schedule", "0"}));
  EXPECT_EQ(resume_argv(keys, 2), (Argv{"FCALL", "expiry_v2_resume", "1", "ns:{3}:schedule", "2"}));
  auto range = decode_range(array({integer(4), integer(9), bulk("5:2")}));
  ASSERT_TRUE(range);
  EXPECT_EQ(range->acted, 4);
  EXPECT_EQ(range->cursor, "5:2");
  EXPECT_FALSE(decode_range(array({integer(4), integer(9)})));
  auto run = decode_run_now(array({integer(1), integer(80), integer(20)}));
  ASSERT_TRUE(run);
  EXPECT_TRUE(run->pending);
  EXPECT_EQ(run->previous_due_ms, 80);
  auto none = decode_run_now(array({integer(0), integer(-1), integer(-1)}));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->pending);
  EXPECT_FALSE(decode_run_now(array({integer(0)}))) << "the v1 reply of expiry_run_now";
  EXPECT_FALSE(decode_run_now(array({integer(2), integer(80), integer(20)})));
  EXPECT_FALSE(decode_run_now(array({integer(1), integer(80)})));
  auto paused = decode_pause(array({integer(0), integer(5), integer(2)}));
  ASSERT_TRUE(paused);
  EXPECT_EQ(paused->overdue, 2);
}

TEST(FunctionLibrary, ScheduleArgvCarriesOptionsAfterStreamAndDb) {
  const KeyLayout keys("ns");
  EXPECT_EQ(schedule_argv(keys, "a", ScheduleMode::Delay, 5, "p", {}, std::nullopt, "if_absent"),
            (Argv{"FCALL", "expiry_v2_schedule", "3", "ns:{0}:schedule", "ns:{0}:t:a", "ns:{0}:task:a", "a", "delay",
                  "5", "p", "", "", "if_absent"}));
  auto kept = decode_schedule(array({integer(70), integer(2)}));
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->kept);
  EXPECT_FALSE(kept->replaced);
}

TEST(FunctionLibrary, DecodeClaimRejectsUnknownOutcomes) {
  EXPECT_FALSE(decode_claim(array({})));
  EXPECT_FALSE(decode_claim(claim_reply(3, "1-0", 0, 0, -1)));
  EXPECT_FALSE(decode_claim(claim_reply(-3, "", -1, 5, -1)));
  EXPECT_FALSE(decode_claim(array({nil(), bulk(""), integer(-1), integer(-1), integer(-1)})));
  EXPECT_FALSE(decode_claim(array({bulk("1"), bulk("1-0"), integer(0), integer(0), integer(-1)})));
}

// Only the five-element v2 reply: the shapes of the v1 expiry_claim are refused.
TEST(FunctionLibrary, DecodeClaimRejectsWrongArities) {
  EXPECT_FALSE(decode_claim(array({integer(1), bulk("1-0"), integer(1)})));
  EXPECT_FALSE(decode_claim(array({integer(0)})));
  EXPECT_FALSE(decode_claim(array({integer(-1), integer(5)})));
  EXPECT_FALSE(decode_claim(array({integer(2), bulk("7-0"), integer(900)})));
  EXPECT_FALSE(decode_claim(array({integer(-2), integer(0)})));
  EXPECT_FALSE(decode_claim(array({integer(1), bulk("1-0"), integer(1), integer(2)})));
  EXPECT_FALSE(decode_claim(array({integer(1), bulk("1-0"), integer(1), integer(2), integer(-1), integer(0)})));
}

TEST(FunctionLibrary, DecodeClaimRejectsWrongElementTypes) {
  EXPECT_FALSE(decode_claim(array({integer(-1), bulk(""), integer(-1), bulk("1700000005000"), integer(-1)})));
  EXPECT_FALSE(decode_claim(array({integer(-1), bulk(""), integer(-1), nil(), integer(-1)})));
  EXPECT_FALSE(decode_claim(array({integer(1), integer(42), integer(0), integer(0), integer(-1)})));
  EXPECT_FALSE(decode_claim(array({integer(1), nil(), integer(0), integer(0), integer(-1)})));
  EXPECT_FALSE(decode_claim(array({integer(1), error("ERR x"), integer(0), integer(0), integer(-1)})));
  EXPECT_FALSE(decode_claim(array({integer(1), array({}), integer(0), integer(0), integer(-1)})));
  EXPECT_FALSE(decode_claim(array({integer(1), bulk("1-0"), bulk("7"), integer(0), integer(-1)})));
  EXPECT_FALSE(decode_claim(array({integer(-2), bulk(""), integer(-1), integer(0), bulk("0")})));
  EXPECT_FALSE(decode_claim(claim_reply(1, "", 0, 0, -1))) << "a forwarded task has an entry id";
}

// ---- decode_sweep: {forwarded, next_due, now, pending, overdue, {lateness}, migrating, paused_until, late}

Reply sweep_reply(long long forwarded, long long next_due, long long now, long long pending = 0,
                  long long overdue = 0, std::vector<long long> lateness = {}) {
  if (lateness.empty()) lateness.assign(static_cast<size_t>(forwarded), 0);
  std::vector<Reply> l;
  for (auto v : lateness) l.push_back(integer(v));
  return array({integer(forwarded), integer(next_due), integer(now), integer(pending), integer(overdue), array(l),
                integer(0), integer(-1), integer(0)});
}

TEST(FunctionLibrary, DecodeSweep) {
  auto r = decode_sweep(sweep_reply(3, 1700000001000LL, 1700000000500123LL, 10, 0, {1, 2, 30}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->forwarded, 3);
  EXPECT_EQ(r->next_due_ms, 1700000001000LL);
  EXPECT_EQ(r->now_us, 1700000000500123LL);
  EXPECT_EQ(r->now_ms(), 1700000000500LL);
  EXPECT_EQ(r->pending, 10);
  EXPECT_EQ(r->overdue, 0);
  EXPECT_EQ(r->lateness_ms, (std::vector<long long>{1, 2, 30}));
  EXPECT_FALSE(r->more_due());
}

TEST(FunctionLibrary, DecodeSweepEmptySchedule) {
  auto r = decode_sweep(sweep_reply(0, -1, 1700000000500000LL));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->forwarded, 0);
  EXPECT_EQ(r->next_due_ms, -1);
  EXPECT_TRUE(r->lateness_ms.empty());
  EXPECT_FALSE(r->more_due());
}

TEST(FunctionLibrary, DecodeSweepMigratingFlag) {
  Reply reply = sweep_reply(2, 400, 500000, 5, 5);
  reply.elements[6] = integer(1);
  auto migrating = decode_sweep(reply);
  ASSERT_TRUE(migrating.has_value());
  EXPECT_TRUE(migrating->migrating);
  EXPECT_EQ(migrating->forwarded, 2);
  EXPECT_EQ(migrating->paused_until_ms, -1);
  EXPECT_EQ(migrating->late, 0);
  reply.elements[6] = integer(0);
  auto settled = decode_sweep(reply);
  ASSERT_TRUE(settled.has_value());
  EXPECT_FALSE(settled->migrating);
  reply.elements[6] = bulk("1");
  EXPECT_FALSE(decode_sweep(reply));
}

// Only the nine-element v2 reply: the six and seven elements of older v1 callers are refused.
TEST(FunctionLibrary, DecodeSweepTakesNineElementsOnly) {
  Reply reply = sweep_reply(2, 400, 500000, 5, 5);
  for (size_t size : {6u, 7u, 8u}) {
    Reply shorter = reply;
    shorter.elements.resize(size);
    EXPECT_FALSE(decode_sweep(shorter)) << size << " elements";
  }
  Reply longer = reply;
  longer.elements.push_back(integer(0));
  EXPECT_FALSE(decode_sweep(longer)) << "ten elements";
  for (size_t i : {7u, 8u}) {
    Reply wrong = reply;
    wrong.elements[i] = bulk("0");
    EXPECT_FALSE(decode_sweep(wrong)) << "element " << i;
  }
}

TEST(FunctionLibrary, SweepMoreDue) {
  auto due_now = decode_sweep(sweep_reply(100, 500, 500999, 5, 5));
  ASSERT_TRUE(due_now.has_value());
  EXPECT_TRUE(due_now->more_due());
  auto overdue = decode_sweep(sweep_reply(100, 400, 500000, 5, 5));
  ASSERT_TRUE(overdue.has_value());
  EXPECT_TRUE(overdue->more_due());
  auto later = decode_sweep(sweep_reply(100, 501, 500999, 5, 0));
  ASSERT_TRUE(later.has_value());
  EXPECT_FALSE(later->more_due());
  SweepResult defaults;
  EXPECT_FALSE(defaults.more_due());
}

TEST(FunctionLibrary, DecodeSweepRejectsOtherShapes) {
  EXPECT_FALSE(decode_sweep(error("ERR expiry: sweep limit must be 1..10000")));
  EXPECT_FALSE(decode_sweep(Reply::io_error("reset")));
  EXPECT_FALSE(decode_sweep(nil()));
  EXPECT_FALSE(decode_sweep(integer(3)));
  EXPECT_FALSE(decode_sweep(array({})));
  EXPECT_FALSE(decode_sweep(array({integer(1), integer(2), integer(3)})));
  const auto nine = [](Reply forwarded, Reply next_due, Reply lateness) {
    return array({std::move(forwarded), std::move(next_due), integer(3), integer(4), integer(0), std::move(lateness),
                  integer(0), integer(-1), integer(0)});
  };
  EXPECT_FALSE(decode_sweep(nine(integer(0), integer(2), integer(0))));
  EXPECT_FALSE(decode_sweep(nine(bulk("0"), integer(2), array({}))));
  EXPECT_FALSE(decode_sweep(nine(integer(0), nil(), array({}))));
  // The lateness list must have one integer per forwarded task.
  EXPECT_FALSE(decode_sweep(nine(integer(2), integer(2), array({integer(1)}))));
  EXPECT_FALSE(decode_sweep(nine(integer(1), integer(2), array({bulk("1")}))));
}

}  // namespace
}  // namespace expiry
