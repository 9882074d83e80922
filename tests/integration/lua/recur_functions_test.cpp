// The recurring schedules of the function library (src/lua/expiry/recur.lua, occurrences.lua),
// called directly (FCALL) on a real redis-server: set, get, list, delete, pause, resume, refill;
// a rule replaced while an occurrence is armed; the misfire policies and the lateness limit as a
// sweep applies them; the retry of an occurrence; bad input. Instants come from the rule engine
// (recur_instants), as the writers and the relays compute them.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "functions/recur_calls.h"
#include "recur/recur_plan.h"
#include "recur/time_zone.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;
using Fields = std::map<std::string, std::string>;

const KeyLayout kKeys("expiry", 0);
const std::string kStream = "expiry:stream";
const std::string kDead = "expiry:stream:dead";
const std::string kRefillSet = "expiry:{0}:recur_refill";
const std::string kIndex = "expiry:{0}:recurs";
constexpr long long kFar = 4102444800000;  // 2100-01-01

// `count` instants of "@every <period>" anchored at start_ms, strictly after after_ms.
std::vector<RecurInstant> instants_of(const std::string& period, long long start_ms, long long after_ms,
                                      std::size_t count = kRecurInstantsPerWrite,
                                      const TimeZone& zone = TimeZone::utc()) {
  return recur_instants(stored_recur_rule("@every " + period, start_ms), zone, after_ms, start_ms, std::nullopt, count);
}

RecurDefinition every(const std::string& period, long long start_ms, const std::string& misfire = "once",
                      long long grace_ms = 1000) {
  RecurDefinition def;
  def.rule = "@every " + period;
  def.start_ms = start_ms;
  def.payload = "pl-" + period;
  def.misfire = misfire;
  def.grace_ms = grace_ms;
  return def;
}

class RecurFunctions : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(redis_.command(load_library_argv()).failed()); }

  long long now_ms() {
    const Reply t = redis_.command({"TIME"});
    return std::stoll(t.elements[0].str) * 1000 + std::stoll(t.elements[1].str) / 1000;
  }
  void wait_clock_past(long long ms) { ASSERT_TRUE(wait_until([&] { return now_ms() > ms; }, 60s)); }

  RecurSetResult set(const std::string& id, const RecurDefinition& def, const std::vector<RecurInstant>& instants) {
    const Reply r = redis_.command(recur_set_argv(kKeys, id, def, instants));
    const auto decoded = decode_recur_set(r);
    EXPECT_TRUE(decoded) << r.describe();
    return decoded.value_or(RecurSetResult{});
  }

  Fields get(const std::string& id) {
    const Reply r = redis_.command(recur_get_argv(kKeys, id));
    const auto decoded = decode_recur_get(r);
    EXPECT_TRUE(decoded) << r.describe();
    return decoded.value_or(Fields{});
  }

  // Schedule `id`'s stored instants, in order, as "<ms>|<local>" joined by ','.
  std::string listed(const std::string& id) {
    std::string out;
    const Reply r = redis_.command({"ZRANGE", kKeys.recur_next_key(id), "0", "-1"});
    for (const Reply& m : r.elements) out += (out.empty() ? "" : ",") + m.str;
    return out;
  }

  Fields hash(const std::string& key) {
    Fields out;
    const Reply r = redis_.command({"HGETALL", key});
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
    return out;
  }

  // The due time of task `id` (-1: not pending).
  long long score(const std::string& id) {
    const Reply r = redis_.command({"ZSCORE", kKeys.schedule_key(), id});
    return r.type == Reply::Type::Nil ? -1 : std::stoll(r.str);
  }

  bool refill_requested(const std::string& id) {
    return redis_.command({"ZSCORE", kRefillSet, id}).type != Reply::Type::Nil;
  }

  std::vector<Fields> entries(const std::string& stream) { return xrange_all(redis_, stream); }

  // Sweeps until nothing due is left (each sweep claims an occurrence's catch-up at most once
  // per schedule: the next one it arms waits for the next call).
  void sweep_until_idle(const ClaimLimits& limits = {}) {
    for (int call = 0; call < 200; ++call) {
      const Reply r = redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers", limits));
      const auto sweep = decode_sweep(r);
      ASSERT_TRUE(sweep) << r.describe();
      if (sweep->overdue == 0 && sweep->forwarded == 0 && sweep->late == 0) {
        // A call that found nothing due may still have skipped occurrences: one more look.
        const auto again = decode_sweep(redis_.command(sweep_argv(kKeys, kStream, 100, "sweep", "workers", limits)));
        ASSERT_TRUE(again);
        if (again->overdue == 0 && again->forwarded == 0 && again->late == 0) return;
      }
    }
    FAIL() << "the sweeps never caught up";
  }

  // Every key in the database (the function library is not a key).
  std::set<std::string> keys() {
    std::set<std::string> out;
    for (const auto& k : redis_.command({"KEYS", "*"}).elements) out.insert(k.str);
    return out;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(RecurFunctions, SetStoresTheDefinitionAndArmsTheFirstInstantThatGetReports) {
  const long long start = now_ms() + 60000;
  const auto inst = instants_of("1m", start, start - 1, kRecurInstantsPerWrite, TimeZone::find("Europe/Berlin"));
  ASSERT_NE(inst[0].local_iso.find("+0"), std::string::npos) << inst[0].local_iso;
  RecurDefinition def = every("1m", start, "all", 2500);
  def.misfire_max = 7;
  def.max_late_ms = 900;
  def.tz = "Europe/Berlin";
  const auto r = set("daily", def, inst);
  EXPECT_EQ(r.version, 1);
  EXPECT_EQ(r.armed_ms, inst[0].utc_ms);
  EXPECT_EQ(r.upcoming, static_cast<long long>(inst.size()) - 1);
  EXPECT_FALSE(r.replaced);

  const Fields g = get("daily");
  EXPECT_EQ(g.at("rule"), "@every 1m");
  EXPECT_EQ(g.at("tz"), "Europe/Berlin");
  EXPECT_EQ(g.at("start_ms"), std::to_string(start));
  EXPECT_EQ(g.at("payload"), "pl-1m");
  EXPECT_EQ(g.at("misfire"), "all");
  EXPECT_EQ(g.at("grace_ms"), "2500");
  EXPECT_EQ(g.at("misfire_max"), "7");
  EXPECT_EQ(g.at("max_late_ms"), "900");
  EXPECT_EQ(g.at("paused"), "0");
  EXPECT_EQ(g.at("version"), "1");
  EXPECT_EQ(g.at("horizon_ms"), std::to_string(inst.back().utc_ms));
  EXPECT_EQ(g.at("armed_ms"), std::to_string(inst[0].utc_ms));
  EXPECT_EQ(g.at("armed_local"), inst[0].local_iso);
  std::string upcoming;
  for (size_t i = 1; i < inst.size(); ++i) {
    upcoming += (i > 1 ? "," : "") + std::to_string(inst[i].utc_ms) + "|" + inst[i].local_iso;
  }
  EXPECT_EQ(listed("daily"), upcoming);
  EXPECT_EQ(g.at("upcoming"), std::to_string(inst.size() - 1));
  EXPECT_EQ(g.count("ended"), 0u);

  // The armed occurrence is an ordinary task marked recur, with its trigger.
  EXPECT_EQ(score("daily"), inst[0].utc_ms);
  const Fields shadow = hash(kKeys.shadow_key("daily"));
  EXPECT_EQ(shadow.at("recur"), "1");
  EXPECT_EQ(shadow.at("payload"), "pl-1m");
  EXPECT_EQ(shadow.at("occurrence_ms"), std::to_string(inst[0].utc_ms));
  EXPECT_EQ(shadow.at("occurrence_local"), inst[0].local_iso);
  EXPECT_EQ(shadow.at("max_late_ms"), "900");
  EXPECT_GT(integer(redis_, {"PTTL", kKeys.trigger_key("daily")}), 0);
  EXPECT_FALSE(refill_requested("daily")) << "31 instants left: no refill asked";

  EXPECT_TRUE(get("nothing").empty());
}

TEST_F(RecurFunctions, ListPagesThroughEverySchedule) {
  const long long start = now_ms() + 60000;
  std::set<std::string> want;
  for (int i = 0; i < 25; ++i) {
    const std::string id = "s" + std::to_string(i);
    set(id, every("1m", start), instants_of("1m", start, start - 1, 10));
    want.insert(id);
  }
  std::set<std::string> seen;
  std::string cursor = "0";
  for (int page = 0; page < 100; ++page) {
    const Reply r = redis_.command(recur_list_argv(kKeys, cursor, 4));
    const auto decoded = decode_recur_list(r);
    ASSERT_TRUE(decoded) << r.describe();
    seen.insert(decoded->ids.begin(), decoded->ids.end());
    cursor = decoded->cursor;
    if (cursor == "0") break;
  }
  EXPECT_EQ(cursor, "0");
  EXPECT_EQ(seen, want);
}

TEST_F(RecurFunctions, DeleteRemovesTheDefinitionAndItsArmedTask) {
  const long long start = now_ms() + 60000;
  set("gone", every("1m", start), instants_of("1m", start, start - 1, 4));  // 3 left: a refill is asked
  ASSERT_TRUE(refill_requested("gone"));
  ASSERT_EQ(integer(redis_, {"EXISTS", kKeys.trigger_key("gone"), kKeys.shadow_key("gone")}), 2);
  EXPECT_EQ(redis_.command(recur_delete_argv(kKeys, "gone")).integer, 1);
  EXPECT_EQ(score("gone"), -1);
  EXPECT_EQ(integer(redis_, {"EXISTS", kKeys.trigger_key("gone"), kKeys.shadow_key("gone"), kKeys.recur_key("gone")}),
            0);
  EXPECT_EQ(integer(redis_, {"SISMEMBER", kIndex, "gone"}), 0);
  EXPECT_FALSE(refill_requested("gone"));
  EXPECT_TRUE(get("gone").empty());
  EXPECT_EQ(redis_.command(recur_delete_argv(kKeys, "gone")).integer, 0);
  EXPECT_TRUE(keys().empty()) << "keys left behind";
}

TEST_F(RecurFunctions, SetOnAPendingOneOffTaskIsRefusedWithNothingWritten) {
  ASSERT_FALSE(redis_.command(schedule_argv(kKeys, "oneoff", ScheduleMode::At, kFar, "mine")).failed());
  const std::set<std::string> before = keys();
  const long long start = now_ms() + 60000;
  const Reply r = redis_.command(recur_set_argv(kKeys, "oneoff", every("1m", start), instants_of("1m", start, 0, 5)));
  ASSERT_TRUE(r.failed()) << r.describe();
  EXPECT_NE(r.str.find("one-off"), std::string::npos) << r.str;
  EXPECT_EQ(keys(), before);
  EXPECT_EQ(score("oneoff"), kFar);
  EXPECT_EQ(hash(kKeys.shadow_key("oneoff")).at("payload"), "mine");
  EXPECT_EQ(hash(kKeys.shadow_key("oneoff")).count("recur"), 0u);
}

TEST_F(RecurFunctions, ReplacingTheRuleReArmsAFutureOccurrenceAtTheNewRulesFirstInstant) {
  const long long now = now_ms();
  const long long start = now + 60000;
  set("r", every("1m", start), instants_of("1m", start, start - 1));
  ASSERT_EQ(score("r"), start);
  // The new rule: every 2 minutes from 30 s from now.
  const long long start2 = now + 30000;
  const auto inst2 = instants_of("2m", start2, start2 - 1);
  RecurDefinition def2 = every("2m", start2);
  def2.payload = "new";
  const auto r = set("r", def2, inst2);
  EXPECT_EQ(r.version, 2);
  EXPECT_TRUE(r.replaced);
  EXPECT_EQ(r.armed_ms, start2);
  EXPECT_EQ(score("r"), start2);
  const Fields shadow = hash(kKeys.shadow_key("r"));
  EXPECT_EQ(shadow.at("occurrence_ms"), std::to_string(start2));
  EXPECT_EQ(shadow.at("payload"), "new");
  const Fields g = get("r");
  EXPECT_EQ(g.at("rule"), "@every 2m");
  EXPECT_EQ(g.at("version"), "2");
  EXPECT_EQ(g.at("armed_ms"), std::to_string(start2));
  EXPECT_EQ(integer(redis_, {"ZCARD", kKeys.schedule_key()}), 1);
}

TEST_F(RecurFunctions, ReplacingTheRuleKeepsAnOccurrenceAlreadyDueWhichFiresOnceUnderTheOldRule) {
  const long long start = now_ms() + 150;
  const auto old_inst = instants_of("1s", start, start - 1);
  set("due", every("1s", start, "once", 60000), old_inst);
  wait_clock_past(start + 10);  // due, not claimed: no relay runs
  // The new rule: every 5 s from the next whole 5 s after now.
  const long long now = now_ms();
  const long long start2 = now + 5000 - now % 5000;
  RecurDefinition def2 = every("5s", start2, "once", 60000);
  def2.payload = "new";
  const auto inst2 = instants_of("5s", start2, now);
  const auto r = set("due", def2, inst2);
  EXPECT_EQ(r.version, 2);
  EXPECT_TRUE(r.replaced);
  EXPECT_EQ(r.armed_ms, start) << "the due occurrence keeps its place";
  EXPECT_EQ(score("due"), start);

  sweep_until_idle();
  const auto fired = entries(kStream);
  ASSERT_EQ(fired.size(), 1u) << "doubled";
  EXPECT_EQ(fired[0].at("id"), "due");
  EXPECT_EQ(fired[0].at("occurrence_ms"), std::to_string(start));
  EXPECT_EQ(fired[0].at("due_ms"), std::to_string(start));
  EXPECT_EQ(fired[0].at("payload"), "pl-1s") << "it fires under the old rule";
  EXPECT_EQ(fired[0].at("recur"), "1");
  EXPECT_EQ(fired[0].count("misfire"), 0u);
  // Then the new rule's first instant after it is armed, and no old one.
  EXPECT_EQ(score("due"), inst2[0].utc_ms);
  EXPECT_EQ(hash(kKeys.shadow_key("due")).at("payload"), "new");
  EXPECT_EQ(get("due").at("last_ms"), std::to_string(start));
}

TEST_F(RecurFunctions, PauseRemovesTheArmedTaskAndResumeArmsTheFirstInstantAfterNow) {
  const long long now = now_ms();
  const long long start = now - 5500;  // anchored in the past: instants every second around now
  set("p", every("1s", start), instants_of("1s", start, now));
  ASSERT_NE(score("p"), -1);
  const auto paused = decode_recur_state(redis_.command(recur_pause_argv(kKeys, "p")));
  ASSERT_TRUE(paused);
  EXPECT_TRUE(paused->exists);
  EXPECT_TRUE(paused->changed);
  EXPECT_EQ(score("p"), -1);
  EXPECT_EQ(integer(redis_, {"EXISTS", kKeys.trigger_key("p"), kKeys.shadow_key("p")}), 0);
  EXPECT_EQ(get("p").at("paused"), "1");
  EXPECT_EQ(get("p").at("armed_ms"), "");
  const auto again = decode_recur_state(redis_.command(recur_pause_argv(kKeys, "p")));
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->changed);
  sweep_until_idle();
  EXPECT_TRUE(entries(kStream).empty());

  // Resume with instants that start 5 s in the past: only those after now count.
  const long long before = now_ms();
  const auto inst = instants_of("1s", start, before - 5000);
  const auto resumed = decode_recur_state(redis_.command(recur_resume_argv(kKeys, "p", inst)));
  const long long after = now_ms();
  ASSERT_TRUE(resumed);
  EXPECT_TRUE(resumed->exists);
  EXPECT_TRUE(resumed->changed);
  EXPECT_GE(resumed->armed_ms, before);
  EXPECT_LE(resumed->armed_ms - 1000, after) << "the first instant after now";
  EXPECT_EQ((resumed->armed_ms - start) % 1000, 0);
  EXPECT_EQ(score("p"), resumed->armed_ms);
  EXPECT_EQ(get("p").at("paused"), "0");
  const auto twice = decode_recur_state(redis_.command(recur_resume_argv(kKeys, "p", inst)));
  ASSERT_TRUE(twice);
  EXPECT_FALSE(twice->changed);
  EXPECT_EQ(twice->armed_ms, resumed->armed_ms);
}

TEST_F(RecurFunctions, ARefillWithAStaleVersionChangesNothing) {
  const long long start = now_ms() + 60000;
  set("v", every("1m", start), instants_of("1m", start, start - 1, 4));
  set("v", every("1m", start), instants_of("1m", start, start - 1, 4));  // version 2
  const Fields before = hash(kKeys.recur_key("v"));
  ASSERT_EQ(before.at("version"), "2");
  const Reply r = redis_.command(recur_refill_argv(kKeys, "v", "1", instants_of("1m", start, start - 1, 20)));
  const auto decoded = decode_recur_refill(r);
  ASSERT_TRUE(decoded) << r.describe();
  EXPECT_FALSE(decoded->refilled);
  EXPECT_EQ(hash(kKeys.recur_key("v")), before);
  EXPECT_TRUE(refill_requested("v")) << "the current version still waits";
}

TEST_F(RecurFunctions, ARefillAppendsOnlyInstantsAfterTheHorizonAndRepeatingItChangesNothing) {
  const long long start = now_ms() + 60000;
  const auto all = instants_of("1m", start, start - 1, 12);
  set("h", every("1m", start), std::vector<RecurInstant>(all.begin(), all.begin() + 4));
  ASSERT_TRUE(refill_requested("h"));
  const auto refills = decode_recur_refills(redis_.command(recur_refills_argv(kKeys, 10)));
  ASSERT_TRUE(refills);
  ASSERT_EQ(refills->rows.size(), 1u);
  EXPECT_EQ(refills->rows[0].id, "h");
  EXPECT_EQ(refills->rows[0].horizon_ms, all[3].utc_ms);
  EXPECT_EQ(refills->rows[0].upcoming, 3);
  EXPECT_TRUE(refills->rows[0].armed);

  // What a relay computes overlaps the list: only those after the horizon are appended.
  const auto r = decode_recur_refill(redis_.command(recur_refill_argv(kKeys, "h", "1", all)));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->refilled);
  EXPECT_EQ(r->armed_ms, all[0].utc_ms);
  EXPECT_EQ(r->upcoming, 11);
  const Fields after = hash(kKeys.recur_key("h"));
  EXPECT_EQ(after.at("horizon_ms"), std::to_string(all.back().utc_ms));
  std::string want;
  for (size_t i = 1; i < all.size(); ++i) {
    want += (i > 1 ? "," : "") + std::to_string(all[i].utc_ms) + "|" + all[i].local_iso;
  }
  EXPECT_EQ(listed("h"), want);
  EXPECT_FALSE(refill_requested("h"));

  const auto repeated = decode_recur_refill(redis_.command(recur_refill_argv(kKeys, "h", "1", all)));
  ASSERT_TRUE(repeated);
  EXPECT_EQ(repeated->upcoming, 11);
  Fields again = hash(kKeys.recur_key("h"));
  again.erase("updated_ms");
  Fields expected = after;
  expected.erase("updated_ms");
  EXPECT_EQ(again, expected);
  EXPECT_EQ(score("h"), all[0].utc_ms);
}

TEST_F(RecurFunctions, ARefillWithNoInstantMarksTheRuleEndedAndNoRefillIsAskedAgain) {
  const long long start = now_ms() + 200;
  const auto inst = instants_of("200ms", start, start - 1, 3);
  set("end", every("200ms", start, "once", 60000), inst);
  ASSERT_TRUE(refill_requested("end"));
  const auto r = decode_recur_refill(redis_.command(recur_refill_argv(kKeys, "end", "1", {})));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->refilled);
  EXPECT_EQ(get("end").at("ended"), "1");
  EXPECT_FALSE(refill_requested("end"));

  // The instants left still fire; none of them asks for a refill again.
  wait_clock_past(inst.back().utc_ms + 10);
  sweep_until_idle();
  const auto fired = entries(kStream);
  ASSERT_EQ(fired.size(), inst.size());
  for (size_t i = 0; i < inst.size(); ++i) EXPECT_EQ(fired[i].at("occurrence_ms"), std::to_string(inst[i].utc_ms));
  EXPECT_FALSE(refill_requested("end"));
  EXPECT_EQ(score("end"), -1);
  const auto refills = decode_recur_refills(redis_.command(recur_refills_argv(kKeys, 10)));
  ASSERT_TRUE(refills);
  EXPECT_TRUE(refills->rows.empty());
  EXPECT_EQ(get("end").at("fired"), "3");
}

// Four schedules on the same instants (every 2 s from A, grace 300 ms), left unswept until
// instants A..A+8000 are missed and A+10000 is not: then the sweeps apply each policy.
TEST_F(RecurFunctions, SweepsApplyEachMisfirePolicyToMissedOccurrences) {
  const long long a = now_ms() + 300;
  const auto inst = instants_of("2s", a, a - 1);
  set("skip", every("2s", a, "skip", 300), inst);
  set("once", every("2s", a, "once", 300), inst);
  set("all", every("2s", a, "all", 300), inst);
  RecurDefinition capped = every("2s", a, "all", 300);
  capped.misfire_max = 2;
  set("all-max2", capped, inst);
  wait_clock_past(a + 8600);
  sweep_until_idle();
  const long long swept = now_ms();
  ASSERT_LT(swept, a + 10300) << "the sweeps took too long for this test's window";

  std::map<std::string, std::vector<Fields>> by_id;
  for (auto& e : entries(kStream)) by_id[e.at("id")].push_back(e);
  // An entry at or after A+10000 fires on time (not a catch-up) if the sweeps ran past it.
  const auto catch_ups = [&](const std::string& id) {
    std::vector<long long> out;
    for (const auto& e : by_id[id]) {
      const long long occ = std::stoll(e.at("occurrence_ms"));
      EXPECT_EQ(e.at("due_ms"), e.at("occurrence_ms"));
      EXPECT_EQ(e.at("recur"), "1");
      if (occ >= a + 10000) {
        EXPECT_EQ(e.count("misfire"), 0u) << id << " " << occ;
        continue;
      }
      EXPECT_EQ(e.at("misfire"), "catch_up") << id << " " << occ;
      out.push_back(occ);
    }
    return out;
  };
  EXPECT_EQ(catch_ups("skip"), std::vector<long long>{});
  EXPECT_EQ(catch_ups("once"), std::vector<long long>{a + 8000}) << "the latest missed occurrence";
  EXPECT_EQ(catch_ups("all"), (std::vector<long long>{a, a + 2000, a + 4000, a + 6000, a + 8000}));
  EXPECT_EQ(catch_ups("all-max2"), (std::vector<long long>{a, a + 2000}));
  for (const std::string id : {"skip", "once", "all", "all-max2"}) {
    SCOPED_TRACE(id);
    const long long next = score(id);
    EXPECT_TRUE(next == a + 10000 || next == a + 12000) << next;
    const Fields g = get(id);
    EXPECT_EQ(std::stoll(g.at("fired")) + std::stoll(g.at("skipped")), (next - a) / 2000) << "each instant once";
  }
  EXPECT_EQ(get("skip").at("fired"), std::to_string(by_id["skip"].size()));
}

TEST_F(RecurFunctions, ALateOccurrenceBeyondItsLimitIsDeadLetteredAndTheNextIsStillArmed) {
  const long long a = now_ms() + 200;
  RecurDefinition def = every("1m", a, "once", 600000);
  def.max_late_ms = 200;
  const auto inst = instants_of("1m", a, a - 1);
  set("late", def, inst);
  wait_clock_past(a + 500);
  sweep_until_idle();
  EXPECT_TRUE(entries(kStream).empty());
  const auto dead = entries(kDead);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].at("id"), "late");
  EXPECT_EQ(dead[0].at("reason"), "late");
  EXPECT_EQ(dead[0].at("max_late_ms"), "200");
  EXPECT_EQ(dead[0].at("occurrence_ms"), std::to_string(a));
  EXPECT_GT(std::stoll(dead[0].at("late_ms")), 200);
  EXPECT_EQ(score("late"), inst[1].utc_ms) << "the next occurrence is armed";
  EXPECT_EQ(get("late").at("last_ms"), std::to_string(a));
}

TEST_F(RecurFunctions, ARetryOfAnOccurrenceIsItsOwnTaskNamingTheScheduleAndLeavesTheNextArmed) {
  const long long a = now_ms() + 200;
  const auto inst = instants_of("1m", a, a - 1);
  set("job", every("1m", a, "once", 600000), inst);
  wait_clock_past(a + 10);
  sweep_until_idle();
  const auto first = entries(kStream);
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(score("job"), inst[1].utc_ms);
  const Reply read = redis_.command({"XREADGROUP", "GROUP", "workers", "c1", "COUNT", "10", "STREAMS", kStream, ">"});
  ASSERT_FALSE(read.failed()) << read.describe();
  const std::string entry_id = first[0].at("_entry_id");
  const Reply retry = redis_.command({"FCALL", "expiry_v2_retry", "5", kStream, kDead, kKeys.schedule_key(),
                                      kKeys.trigger_key("job"), kKeys.shadow_key("job"), "workers", entry_id, "job",
                                      "0", "5", "handler failed", "0"});
  ASSERT_EQ(retry.type, Reply::Type::Array) << retry.describe();
  ASSERT_EQ(retry.elements.size(), 4u);
  EXPECT_EQ(retry.elements[0].integer, 1) << "scheduled again";
  EXPECT_EQ(retry.elements[2].integer, 2);
  const std::string rid = "job#" + std::to_string(a);
  EXPECT_NE(score(rid), -1);
  EXPECT_EQ(score("job"), inst[1].utc_ms) << "the next occurrence stays armed";
  EXPECT_EQ(hash(kKeys.shadow_key("job")).at("occurrence_ms"), std::to_string(inst[1].utc_ms));

  wait_clock_past(score(rid));
  sweep_until_idle();
  const auto all = entries(kStream);
  ASSERT_EQ(all.size(), 2u);
  const Fields& again = all[1];
  EXPECT_EQ(again.at("id"), "job") << "the retry's entry names the schedule";
  EXPECT_EQ(again.at("occurrence_ms"), std::to_string(a));
  EXPECT_EQ(again.at("occurrence_local"), first[0].at("occurrence_local"));
  EXPECT_EQ(again.at("attempt"), "2");
  EXPECT_EQ(again.at("recur"), "1");
  EXPECT_EQ(again.at("payload"), "pl-1m");
  EXPECT_EQ(score(rid), -1);
  EXPECT_EQ(score("job"), inst[1].utc_ms);
  const Fields g = get("job");
  EXPECT_EQ(g.at("fired"), "1") << "a retry is not an occurrence";
  EXPECT_EQ(g.at("last_ms"), std::to_string(a));
}

TEST_F(RecurFunctions, BadInputIsRefusedAndWritesNothing) {
  const long long start = now_ms() + 60000;
  const auto inst = instants_of("1m", start, start - 1, 5);
  set("kept", every("1m", start), inst);
  const std::set<std::string> before = keys();
  const Fields kept = hash(kKeys.recur_key("kept"));

  RecurDefinition bad_misfire = every("1m", start, "sometimes");
  std::vector<RecurInstant> descending = {inst[1], inst[0]};
  std::vector<std::string> unknown = recur_set_argv(kKeys, "new", every("1m", start), inst);
  unknown[9] = std::to_string(std::stoi(unknown[9]) + 1);  // the field pair count
  unknown.insert(unknown.begin() + 10, {"colour", "blue"});
  std::vector<std::string> garbled = recur_set_argv(kKeys, "new", every("1m", start), inst);
  garbled.back() = "soon|tomorrow";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {recur_set_argv(kKeys, "new", bad_misfire, inst), "misfire must be skip, once or all"},
      {recur_set_argv(kKeys, "new", every("1m", start), descending), "strictly ascending"},
      {unknown, "unknown definition field colour"},
      {garbled, "instant #5"},
      {recur_set_argv(kKeys, "kept", bad_misfire, inst), "misfire must be"},
      {recur_set_argv(kKeys, "kept", every("1m", start), descending), "strictly ascending"},
      {recur_refill_argv(kKeys, "kept", "1", descending), "strictly ascending"},
      {recur_resume_argv(kKeys, "kept", descending), "strictly ascending"},
  };
  for (const auto& [argv, message] : cases) {
    SCOPED_TRACE(message);
    const Reply r = redis_.command(argv);
    ASSERT_TRUE(r.failed()) << r.describe();
    EXPECT_NE(r.str.find(message), std::string::npos) << r.str;
    EXPECT_EQ(keys(), before);
    EXPECT_EQ(hash(kKeys.recur_key("kept")), kept);
  }
  EXPECT_EQ(score("kept"), inst[0].utc_ms);
}

}  // namespace
}  // namespace expiry::test
