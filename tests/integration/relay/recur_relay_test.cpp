// Recurring schedules fired by real expiry-relay processes against a real redis-server: a
// per-second cron across three relays with one killed and restarted (each occurrence once, no
// gap); each misfire policy after an outage of every relay; a rule changed while it runs; pause
// and resume; and the relays topping up a schedule written with few instants. The schedules are
// written with FCALL (recur_calls.h) and instants from the rule engine, as expiry-ctl writes them.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "functions/recur_calls.h"
#include "integration/relay/relay_harness.h"
#include "recur/recur_plan.h"
#include "recur/time_zone.h"

namespace expiry::test {
namespace {

const std::string kStream = "expiry:stream";
const KeyLayout kKeys("expiry");

// One stream entry of an occurrence.
struct Fired {
  long long occurrence_ms = 0;
  long long fired_ms = 0;
  bool catch_up = false;
};

std::vector<RecurInstant> instants_of(const std::string& rule_text, std::optional<long long> start_ms,
                                      long long after_ms, std::size_t count = kRecurInstantsPerWrite) {
  return recur_instants(stored_recur_rule(rule_text, start_ms), TimeZone::utc(), after_ms, start_ms, std::nullopt,
                        count);
}

RecurDefinition definition(const std::string& rule, std::optional<long long> start_ms, const std::string& misfire,
                           long long grace_ms, long long misfire_max = 100) {
  RecurDefinition def;
  def.rule = rule;
  def.start_ms = start_ms;
  def.payload = "payload of " + rule;
  def.misfire = misfire;
  def.grace_ms = grace_ms;
  def.misfire_max = misfire_max;
  return def;
}

// "Contiguous": each occurrence `step` after the one before.
::testing::AssertionResult contiguous(const std::vector<Fired>& fired, long long step) {
  for (size_t i = 1; i < fired.size(); ++i) {
    if (fired[i].occurrence_ms != fired[i - 1].occurrence_ms + step) {
      return ::testing::AssertionFailure() << "occurrence " << fired[i].occurrence_ms << " follows "
                                           << fired[i - 1].occurrence_ms << " (step " << step << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

class RecurRelayTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(redis_.command(load_library_argv()).failed()); }

  std::unique_ptr<ChildProcess> relay(const std::string& instance) {
    auto r = start_relay(server_, instance);
    wait_relay_ready(redis_, instance, *r);
    return r;
  }

  long long now() { return redis_now_ms(redis_); }
  void wait_clock_past(long long ms) { ASSERT_TRUE(wait_until([&] { return now() > ms; }, 60s)); }

  void set(const std::string& id, const RecurDefinition& def, const std::vector<RecurInstant>& instants) {
    const Reply r = redis_.command(recur_set_argv(kKeys, id, def, instants));
    ASSERT_TRUE(decode_recur_set(r)) << r.describe();
  }

  // The occurrences of schedule `id` in the stream, in stream order, checking what every entry
  // of an occurrence carries. No occurrence may be there twice.
  std::vector<Fired> fired(const std::string& id, const std::string& payload) {
    std::vector<Fired> out;
    std::set<long long> seen;
    for (const auto& e : xrange_all(redis_, kStream)) {
      if (e.at("id") != id) continue;
      Fired f;
      f.occurrence_ms = std::stoll(e.at("occurrence_ms"));
      f.fired_ms = std::stoll(e.at("fired_ms"));
      f.catch_up = e.count("misfire") && e.at("misfire") == "catch_up";
      EXPECT_EQ(e.at("due_ms"), e.at("occurrence_ms")) << id;
      EXPECT_EQ(e.at("recur"), "1") << id;
      EXPECT_EQ(e.at("payload"), payload) << id;
      EXPECT_FALSE(e.at("occurrence_local").empty()) << id;
      EXPECT_TRUE(seen.insert(f.occurrence_ms).second) << id << ": occurrence " << f.occurrence_ms << " twice";
      out.push_back(f);
    }
    return out;
  }
  size_t count(const std::string& id) {
    size_t n = 0;
    for (const auto& e : xrange_all(redis_, kStream)) n += e.at("id") == id;
    return n;
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(RecurRelayTest, APerSecondCronFiresEachOccurrenceOnceAcrossThreeRelaysAndAKilledOne) {
  auto r1 = relay("r1");
  auto r2 = relay("r2");
  auto r3 = relay("r3");
  const std::string rule = "* * * * * *";
  // Misfire "all" with a wide grace: even a late claim on a loaded machine fires, so any gap is
  // a lost occurrence.
  const RecurDefinition def = definition(rule, std::nullopt, "all", 5000);
  const auto inst = instants_of(rule, std::nullopt, now());
  set("tick", def, inst);
  ASSERT_TRUE(wait_until([&] { return count("tick") >= 10; }, 30s)) << r1->output();
  r2->kill_hard();  // SIGKILL mid-run
  ASSERT_TRUE(wait_until([&] { return count("tick") >= 15; }, 30s)) << r1->output();
  r2 = relay("r2");
  wait_clock_past(inst[0].utc_ms + 30000);
  ASSERT_TRUE(wait_until([&] { return count("tick") >= 30; }, 30s)) << r1->output();
  // The list of 32 instants ran low on the way: the relays topped it up.
  const auto def_now = decode_recur_get(redis_.command(recur_get_argv(kKeys, "tick")));
  ASSERT_TRUE(def_now);
  EXPECT_GT(std::stoll(def_now->at("horizon_ms")), inst.back().utc_ms) << "no refill";

  std::vector<Fired> all = fired("tick", def.payload);
  std::sort(all.begin(), all.end(), [](const Fired& a, const Fired& b) { return a.occurrence_ms < b.occurrence_ms; });
  ASSERT_GE(all.size(), 30u);
  EXPECT_EQ(all.front().occurrence_ms, inst[0].utc_ms);
  EXPECT_TRUE(contiguous(all, 1000));
  for (const auto& f : all) EXPECT_FALSE(f.catch_up) << f.occurrence_ms << " fired " << f.fired_ms;
}

// Every 1 s, grace 1 s; every relay down for 10 s.
TEST_F(RecurRelayTest, EachMisfirePolicyAfterEveryRelayWasDown) {
  const long long start = now() / 1000 * 1000 + 2000;
  const auto inst = instants_of("@every 1s", start, start - 1);
  const std::map<std::string, RecurDefinition> defs = {
      {"skip", definition("@every 1s", start, "skip", 1000)},
      {"once", definition("@every 1s", start, "once", 1000)},
      {"all", definition("@every 1s", start, "all", 1000)},
      {"all-max3", definition("@every 1s", start, "all", 1000, 3)},
  };
  auto r1 = relay("r1");
  for (const auto& [id, def] : defs) set(id, def, inst);
  ASSERT_TRUE(wait_until([&] { return count("skip") >= 2 && count("all-max3") >= 2; }, 30s)) << r1->output();
  ASSERT_EQ(r1->terminate(), 0);
  const long long down = now();
  wait_clock_past(down + 10000);
  const long long restart = now();
  auto r2 = relay("r2");
  for (const auto& entry : defs) {
    const std::string& id = entry.first;  // named, not bound: clang 14 cannot capture a binding
    const std::string& payload = entry.second.payload;
    ASSERT_TRUE(wait_until(
        [&] {
          const auto f = fired(id, payload);
          return !f.empty() && f.back().occurrence_ms >= restart + 3000;
        },
        30s))
        << id << "\n"
        << r2->output();
  }

  for (const auto& [id, def] : defs) {
    SCOPED_TRACE(id);
    const std::vector<Fired> f = fired(id, def.payload);
    std::vector<Fired> before, caught, after;  // before the outage, catch-ups, on time after it
    for (const auto& x : f) {
      if (x.fired_ms <= down) {
        before.push_back(x);
      } else {
        (x.catch_up ? caught : after).push_back(x);
      }
    }
    ASSERT_GE(before.size(), 2u);
    ASSERT_GE(after.size(), 3u);
    EXPECT_EQ(before.front().occurrence_ms, start);
    EXPECT_TRUE(contiguous(before, 1000));
    for (const auto& x : before) EXPECT_FALSE(x.catch_up);
    EXPECT_TRUE(contiguous(after, 1000)) << "on time after the outage";
    EXPECT_GE(after.front().occurrence_ms, restart - 1000) << "a missed occurrence fired as if on time";
    const long long last = before.back().occurrence_ms;
    const long long missed = after.front().occurrence_ms - last - 1000;  // ms of instants not fired on time
    EXPECT_GE(missed, 8000);
    std::vector<long long> caught_ms;
    for (const auto& x : caught) caught_ms.push_back(x.occurrence_ms);
    if (id == "skip") {
      EXPECT_TRUE(caught.empty());
    } else if (id == "once") {
      ASSERT_EQ(caught.size(), 1u);
      EXPECT_EQ(caught[0].occurrence_ms, after.front().occurrence_ms - 1000) << "the latest missed occurrence";
    } else if (id == "all") {
      std::vector<long long> want;
      for (long long ms = last + 1000; ms < after.front().occurrence_ms; ms += 1000) want.push_back(ms);
      EXPECT_EQ(caught_ms, want) << "every missed occurrence, in order";
    } else {
      EXPECT_EQ(caught_ms, (std::vector<long long>{last + 1000, last + 2000, last + 3000})) << "misfire_max 3";
    }
  }
}

TEST_F(RecurRelayTest, ChangingTheRuleWhileItRunsNeitherDoublesNorSkipsAnOccurrence) {
  const long long start = now() / 2000 * 2000 + 2000;  // even seconds: every 2 s falls on every 1 s
  auto r1 = relay("r1");
  auto r2 = relay("r2");
  const RecurDefinition one = definition("@every 1s", start, "all", 5000);
  set("switch", one, instants_of("@every 1s", start, start - 1));
  ASSERT_TRUE(wait_until([&] { return count("switch") >= 4; }, 30s)) << r1->output();
  RecurDefinition two = definition("@every 2s", start, "all", 5000);
  two.payload = one.payload;  // the entries' check reads one payload
  const long long t0 = now();
  set("switch", two, instants_of("@every 2s", start, t0));
  const long long t1 = now();
  ASSERT_TRUE(wait_until([&] { return !fired("switch", one.payload).empty() &&
                                      fired("switch", one.payload).back().occurrence_ms > t1 + 6000; },
                         30s))
      << r1->output();

  const std::vector<Fired> f = fired("switch", one.payload);
  EXPECT_EQ(f.front().occurrence_ms, start);
  size_t old_rule = 0;
  for (size_t i = 1; i < f.size(); ++i) {
    const long long p = f[i - 1].occurrence_ms;
    const long long q = f[i].occurrence_ms;
    const long long next_two = (p / 2000 + 1) * 2000;
    if (p + 1000 <= t0) {
      EXPECT_EQ(q, p + 1000) << "the old rule's next one was due at the change (or fired before it)";
      ++old_rule;
    } else if (p + 1000 > t1) {
      EXPECT_EQ(q, next_two) << "the new rule's first instant after " << p;
    } else {
      EXPECT_TRUE(q == p + 1000 || q == next_two) << q << " after " << p;
    }
    EXPECT_FALSE(f[i].catch_up);
  }
  EXPECT_GE(old_rule, 3u);
  EXPECT_GE(std::count_if(f.begin(), f.end(), [&](const Fired& x) { return x.occurrence_ms > t1; }), 3);
}

TEST_F(RecurRelayTest, NothingFiresWhilePausedAndResumeFiresOnlyFutureOccurrences) {
  const long long start = now() / 1000 * 1000 + 1000;
  auto r1 = relay("r1");
  const RecurDefinition def = definition("@every 1s", start, "all", 5000);
  set("p", def, instants_of("@every 1s", start, start - 1));
  ASSERT_TRUE(wait_until([&] { return count("p") >= 2; }, 30s)) << r1->output();
  const auto paused = decode_recur_state(redis_.command(recur_pause_argv(kKeys, "p")));
  ASSERT_TRUE(paused && paused->changed);
  const long long paused_at = now();
  const size_t fired_before = count("p");
  wait_clock_past(paused_at + 3500);
  EXPECT_EQ(count("p"), fired_before) << "fired while paused";

  // Resume with instants from before the pause: those before now are not fired.
  const long long resumed_at = now();
  const auto resumed =
      decode_recur_state(redis_.command(recur_resume_argv(kKeys, "p", instants_of("@every 1s", start, paused_at - 5000))));
  ASSERT_TRUE(resumed && resumed->changed);
  ASSERT_TRUE(wait_until([&] { return count("p") >= fired_before + 3; }, 30s)) << r1->output();
  const std::vector<Fired> f = fired("p", def.payload);
  const std::vector<Fired> after(f.begin() + static_cast<long>(fired_before), f.end());
  for (const auto& x : f) {
    EXPECT_FALSE(x.occurrence_ms > paused_at && x.occurrence_ms < resumed_at) << x.occurrence_ms << " fell in the pause";
    EXPECT_FALSE(x.catch_up);
  }
  EXPECT_GE(after.front().occurrence_ms, resumed_at);
  EXPECT_LT(after.front().occurrence_ms, resumed_at + 2000) << "the first instant after the resume";
  EXPECT_TRUE(contiguous(after, 1000));
  EXPECT_TRUE(contiguous(std::vector<Fired>(f.begin(), f.begin() + static_cast<long>(fired_before)), 1000));
}

TEST_F(RecurRelayTest, TheRelaysTopUpASchedulesInstantsSoItKeepsFiring) {
  auto r1 = relay("r1");
  const long long start = now() / 1000 * 1000 + 1000;
  const RecurDefinition def = definition("@every 1s", start, "all", 5000);
  const auto inst = instants_of("@every 1s", start, start - 1, 5);
  set("few", def, inst);
  ASSERT_TRUE(wait_until([&] { return count("few") >= 10; }, 30s)) << r1->output();
  const std::vector<Fired> f = fired("few", def.payload);
  EXPECT_EQ(f.front().occurrence_ms, start);
  EXPECT_TRUE(contiguous(f, 1000));
  const auto g = decode_recur_get(redis_.command(recur_get_argv(kKeys, "few")));
  ASSERT_TRUE(g);
  EXPECT_GT(std::stoll(g->at("horizon_ms")), inst.back().utc_ms);
  EXPECT_NE(g->at("armed_ms"), "");
}

}  // namespace
}  // namespace expiry::test
