// recur (issue 34; not run by default): the cost of recurring schedules at scale. N schedules,
// each firing once a minute (the occurrences spread evenly over the minute), created pipelined
// with the relay stopped; Redis memory per schedule is read then, before anything fires. The
// relay then runs for M minutes: every occurrence of the window must reach the stream exactly
// once, and the window's Redis CPU, the relay's CPU and RSS, and the refills it made are
// reported. Flushes Redis; the output stream is left to grow (no consumer acknowledges, so the
// relay never trims it), which is why memory is read before firing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "base/duration_text.h"
#include "base/errors.h"
#include "bench/lateness_stats.h"
#include "bench/machine_load.h"
#include "bench/redis_probe.h"
#include "bench/relay_process.h"
#include "bench/scenarios.h"
#include "bench/stream_reader.h"
#include "bench/task_writer.h"
#include "functions/recur_calls.h"
#include "producer/task_placement.h"
#include "recur/recur_plan.h"
#include "recur/recur_rule.h"
#include "recur/time_zone.h"

namespace expiry::bench {

namespace {

constexpr const char* kPrefix = "rc-";
constexpr long long kMinuteMs = 60000;
// RECUR_LOW in src/lua/expiry/occurrences.lua: a refill is asked for when fewer are left.
constexpr size_t kRecurLow = 8;
// Before the first occurrence: the relay is started and ready this long before.
constexpr long long kRelayLeadMs = 3000;

// One schedule as the bench created it.
struct PlannedSchedule {
  size_t instants_sent = 0;          // instants given to expiry_v2_recur_set
  long long horizon_ms = 0;          // the last of them
  std::vector<long long> expected;   // its occurrences in [fire_start, window_end)
};

// The rule of schedule i: "@every 1m" anchored at fire_start + i * 60 s / N (one occurrence
// every 60/N s over all schedules), or the cron rule "S * * * * *" with S = i mod 60 (N/60
// occurrences at the start of every second).
struct RulePlan {
  RecurRule rule;
  std::string text;
  std::optional<long long> start_ms;
};

RulePlan rule_of(const std::string& kind, size_t i, size_t n, long long fire_start_ms) {
  if (kind == "cron") {
    RecurRule rule = parse_recur_rule(std::to_string(i % 60) + " * * * * *", &parse_duration_ms, 0);
    return {rule, canonical_text(rule), std::nullopt};
  }
  const long long anchor = fire_start_ms + static_cast<long long>(i) * kMinuteMs / static_cast<long long>(n);
  RecurRule rule = parse_recur_rule("@every 1m", &parse_duration_ms, anchor);
  return {rule, canonical_text(rule), anchor};
}

// How many instants schedule i is created with. 0 (the default): 9 + i mod 24, so schedule i
// asks for a refill at its (i mod 24 + 1)-th occurrence and 1/24 of the schedules refill each
// minute, as in a long run (a refill adds 32 instants, 24 of which fire before the next).
size_t instants_for(size_t i, size_t fixed) {
  if (fixed > 0) return fixed;
  return kRecurLow + 1 + i % (kRecurInstantsPerWrite - kRecurLow);
}

struct RecurRun {
  size_t schedules = 0;
  int minutes = 0;
  double create_seconds = 0;
  long long create_redis_usec = 0;    // INFO commandstats usec of the expiry_v2_recur_set calls
  long long memory_before = 0;        // used_memory, empty namespace
  long long memory_after = 0;         // after creation, before anything fired
  long long memory_end = 0;           // after the run (the stream grew)
  long long fire_start_ms = 0;
  long long window_end_ms = 0;
  size_t expected = 0;                // occurrences in the window
  size_t forwarded = 0;               // distinct in-window occurrences forwarded by the relay
  size_t drained = 0;                 // ... left for the bench to forward after the relay stopped
  size_t lost = 0;
  size_t duplicated = 0;
  size_t unexpected = 0;              // in-window entries at an instant the rule does not have
  size_t outside = 0;                 // entries of occurrences after the window
  size_t catch_ups = 0;               // forwarded more than the misfire grace late
  long long stream_length = 0;
  LatenessSummary lateness;
  size_t fired_in_window = 0;         // entries whose fired_ms lies in the window
  double redis_cpu_seconds = 0;       // over the window
  double relay_cpu_seconds = 0;       // over the window
  double relay_peak_rss_mb = 0;
  double foreign_cpu_percent = 0;
  long long refill_queue_max = 0;     // ZCARD NS:{0}:recur_refill, sampled every second
  long long overdue_max = 0;          // occurrences more than 1 s overdue, sampled every second
  size_t refills_asked = 0;           // schedules that fired enough to ask for more instants
  size_t refilled = 0;                // schedules whose horizon moved past what the bench sent
  long long refill_queue_end = 0;     // ZCARD of the refill queue at the end, after the drain
  long long fcalls = 0;               // INFO commandstats fcall calls over the window
  std::map<std::string, long long> command_usec;  // INFO commandstats usec over the window, by command
  int exit_code = 0;
};

long long used_memory(SyncConnection& conn) { return info_integer(conn, "memory", "used_memory"); }

// The bucket's refill queue (recur_refill_key in src/lua/expiry/keys.lua).
std::string refill_queue_key(const KeyLayout& keys) {
  return keys.ns() + ":{" + std::to_string(keys.bucket()) + "}:recur_refill";
}

// Creates the N schedules, 128 FCALLs per round trip, and returns what each was given.
std::vector<PlannedSchedule> create_schedules(const BenchContext& ctx, SyncConnection& conn,
                                              const TaskPlacement& placement, RecurRun& run) {
  const size_t n = run.schedules;
  const TimeZone zone = TimeZone::utc();
  std::vector<PlannedSchedule> plan(n);
  std::string first_error;
  const auto t0 = std::chrono::steady_clock::now();
  run_pipelined(
      conn, n, ctx.pipeline_depth,
      [&](size_t i) {
        const std::string id = task_id(kPrefix, i);
        const RulePlan r = rule_of(ctx.recur_rule, i, n, run.fire_start_ms);
        const auto instants = recur_instants(r.rule, zone, run.fire_start_ms - 1, r.start_ms, std::nullopt,
                                             instants_for(i, ctx.recur_instants));
        PlannedSchedule& p = plan[i];
        p.instants_sent = instants.size();
        p.horizon_ms = instants.empty() ? 0 : instants.back().utc_ms;
        for (const auto& inst : recur_instants(r.rule, zone, run.fire_start_ms - 1, r.start_ms, std::nullopt,
                                               static_cast<size_t>(run.minutes) + 1)) {
          if (inst.utc_ms < run.window_end_ms) p.expected.push_back(inst.utc_ms);
        }
        RecurDefinition def;
        def.rule = r.text;
        def.start_ms = r.start_ms;
        def.payload = task_payload(id, ctx.payload_bytes);
        return recur_set_argv(placement.keys_of_task(id), id, def, instants, ctx.redis.db);
      },
      [&](size_t i, const Reply& reply) {
        const auto result = decode_recur_set(reply);
        if ((!result || result->armed_ms < 0) && first_error.empty()) {
          first_error = task_id(kPrefix, i) + ": " + reply.describe();
        }
      },
      2);
  run.create_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!first_error.empty()) throw Error("FCALL expiry_v2_recur_set: " + first_error);
  for (const auto& p : plan) run.expected += p.expected.size();
  return plan;
}

// Counts the entries against the plan: every expected (id, occurrence) exactly once.
void tally_entries(const std::vector<ReceivedEntry>& entries, const std::vector<PlannedSchedule>& plan,
                   long long grace_ms, RecurRun& run) {
  std::set<std::pair<long long, long long>> seen;  // (index, occurrence_ms) in the window
  std::vector<size_t> fired_per_schedule(plan.size(), 0);
  std::vector<double> lateness;
  lateness.reserve(run.expected);
  for (const auto& received : entries) {
    if (!received.task) {
      ++run.unexpected;
      continue;
    }
    const ForwardedTask& e = *received.task;
    const long long index = task_index(kPrefix, e.id);
    if (index < 0 || static_cast<size_t>(index) >= plan.size()) {
      ++run.unexpected;
      continue;
    }
    ++fired_per_schedule[static_cast<size_t>(index)];
    if (e.fired_ms >= run.fire_start_ms && e.fired_ms < run.window_end_ms) ++run.fired_in_window;
    if (e.due_ms >= run.window_end_ms) {
      ++run.outside;
      continue;
    }
    const auto& want = plan[static_cast<size_t>(index)].expected;
    if (!std::binary_search(want.begin(), want.end(), e.due_ms)) {
      ++run.unexpected;
      continue;
    }
    if (!seen.insert({index, e.due_ms}).second) {
      ++run.duplicated;
      continue;
    }
    if (e.via == kDrainVia) {
      ++run.drained;
      continue;
    }
    ++run.forwarded;
    const long long late = e.fired_ms - e.due_ms;
    if (late > grace_ms) ++run.catch_ups;
    lateness.push_back(static_cast<double>(late));
  }
  run.lost = run.expected - seen.size();
  run.lateness = summarize_lateness(std::move(lateness), run.drained, static_cast<double>(grace_ms));
  for (size_t i = 0; i < plan.size(); ++i) {
    // After set armed the first instant, instants_sent - 1 are left; each claim takes one, and
    // fewer than RECUR_LOW left asks for a refill.
    if (fired_per_schedule[i] + kRecurLow >= plan[i].instants_sent) ++run.refills_asked;
  }
}

// Schedules whose stored horizon lies past the last instant the bench sent: refilled.
size_t count_refilled(SyncConnection& conn, const TaskPlacement& placement, const std::vector<PlannedSchedule>& plan) {
  size_t refilled = 0;
  run_pipelined(
      conn, plan.size(), 512,
      [&](size_t i) {
        const std::string id = task_id(kPrefix, i);
        return std::vector<std::string>{"HGET", placement.keys_of_task(id).recur_key(id), "horizon_ms"};
      },
      [&](size_t i, const Reply& r) {
        if (r.type == Reply::Type::String && std::stoll(r.str) > plan[i].horizon_ms) ++refilled;
      });
  return refilled;
}

RecurRun run_recur(const BenchContext& ctx, SyncConnection& conn) {
  RecurRun run;
  run.schedules = ctx.sizes.recur_schedules;
  run.minutes = ctx.sizes.recur_minutes;
  TaskPlacement placement;
  placement.ns = ctx.keys.ns();
  placement.stream = ctx.stream;
  placement.db = ctx.redis.db;
  conn.checked({"FLUSHALL"});
  reset_stream(ctx, conn);
  run.memory_before = used_memory(conn);
  // The first occurrence falls after the creation (no relay runs meanwhile, so an occurrence due
  // before the relay starts would be late): 20 s plus 1 ms per schedule (100,000 took 70 s here
  // on a loaded machine, most of it in the bench computing the instants).
  const long long margin_ms = 20000 + static_cast<long long>(run.schedules);
  run.fire_start_ms = (wall_ms() + margin_ms + 999) / 1000 * 1000;
  run.window_end_ms = run.fire_start_ms + run.minutes * kMinuteMs;
  progress("recur: creating " + std::to_string(run.schedules) + " schedules (" + ctx.recur_rule +
           "), first occurrences in " + std::to_string((run.fire_start_ms - wall_ms()) / 1000) + " s");
  const long long create_usec0 = command_usec(conn)["fcall"];
  const std::vector<PlannedSchedule> plan = create_schedules(ctx, conn, placement, run);
  run.create_redis_usec = command_usec(conn)["fcall"] - create_usec0;
  run.memory_after = used_memory(conn);
  progress("recur: created in " + fixed(run.create_seconds, 1) + " s; " + std::to_string(run.expected) +
           " occurrences due in " + std::to_string(run.minutes) + " min");
  if (wall_ms() + kRelayLeadMs > run.fire_start_ms) {
    throw Error("recur: creating the schedules took " + fixed(run.create_seconds, 1) +
                " s, past the planned first occurrence; nothing measured");
  }
  sleep_until_wall_ms(run.fire_start_ms - kRelayLeadMs);
  RelayProcess relay(ctx, RelayRole::Relay, "recur");
  relay.wait_ready(conn);
  StreamReader reader(ctx.redis, ctx.stream);
  const KeyLayout keys = placement.keys_of_task(task_id(kPrefix, 0));
  const std::string refill_queue = refill_queue_key(keys);
  sleep_until_wall_ms(run.fire_start_ms);

  const ProcessUsage u0 = relay.usage();
  const CpuSnapshot cpu0 = cpu_snapshot({ctx.redis_pid, relay.pid()});
  const double redis_cpu0 = redis_cpu_seconds(conn);
  const long long fcalls0 = command_calls(conn)["fcall"];
  const std::map<std::string, long long> usec0 = command_usec(conn);
  progress("recur: window of " + std::to_string(run.minutes) + " min starts");
  for (long long at = run.fire_start_ms + 1000; at <= run.window_end_ms; at += 1000) {
    sleep_until_wall_ms(at);
    if (at == run.window_end_ms) break;
    run.refill_queue_max = std::max(run.refill_queue_max, conn.checked({"ZCARD", refill_queue}).integer);
    const Reply overdue = conn.checked({"ZCOUNT", keys.schedule_key(), "-inf", "(" + std::to_string(at - 1000)});
    run.overdue_max = std::max(run.overdue_max, overdue.integer);
    if ((at - run.fire_start_ms) % kMinuteMs == 0) {
      progress("recur: " + std::to_string((at - run.fire_start_ms) / kMinuteMs) + " min, " +
               std::to_string(reader.count()) + " entries read");
    }
  }
  run.redis_cpu_seconds = redis_cpu_seconds(conn) - redis_cpu0;
  run.fcalls = command_calls(conn)["fcall"] - fcalls0;
  for (const auto& [name, usec] : command_usec(conn)) {
    const auto before = usec0.find(name);
    const long long delta = usec - (before == usec0.end() ? 0 : before->second);
    if (delta > 0) run.command_usec[name] = delta;
  }
  const ProcessUsage u1 = relay.usage();
  run.foreign_cpu_percent = foreign_cpu_percent(cpu0, cpu_snapshot({ctx.redis_pid, relay.pid()}));
  run.relay_cpu_seconds = u1.cpu_seconds - u0.cpu_seconds;
  run.relay_peak_rss_mb = u1.peak_rss_mb;
  // The window's last occurrences, then what the relay left undone.
  sleep_until_wall_ms(run.window_end_ms + ctx.sizes.recur_grace_ms);
  run.exit_code = relay.stop();
  drain_due_tasks(ctx, conn);
  // Asked for by a claim that came too late for the stopped relay (or by the bench's drain).
  run.refill_queue_end = conn.checked({"ZCARD", refill_queue}).integer;
  const std::vector<ReceivedEntry> entries = finish_reader(ctx, conn, reader);
  run.stream_length = conn.checked({"XLEN", ctx.stream}).integer;
  run.memory_end = used_memory(conn);
  tally_entries(entries, plan, 1000, run);
  run.refilled = count_refilled(conn, placement, plan);
  return run;
}

}  // namespace

void run_recur_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  const RecurRun r = run_recur(ctx, conn);
  const double window_s = static_cast<double>(r.window_end_ms - r.fire_start_ms) / 1000.0;
  const double n = static_cast<double>(r.schedules);
  const double per_occurrence_us =
      r.fired_in_window > 0 ? r.redis_cpu_seconds * 1e6 / static_cast<double>(r.fired_in_window) : 0;
  const double memory_per_schedule = static_cast<double>(r.memory_after - r.memory_before) / n;
  auto& j = report.scenario("recur");
  j = {{"schedules", r.schedules},
       {"minutes", r.minutes},
       {"rule", ctx.recur_rule},
       {"instants_per_set", ctx.recur_instants == 0 ? nlohmann::json("9 + i mod 24") : nlohmann::json(ctx.recur_instants)},
       {"create_seconds", r.create_seconds},
       {"create_per_s", n / r.create_seconds},
       {"create_redis_us_per_set", static_cast<double>(r.create_redis_usec) / n},
       {"memory_before", r.memory_before},
       {"memory_after_create", r.memory_after},
       {"memory_end", r.memory_end},
       {"memory_per_schedule_bytes", memory_per_schedule},
       {"expected", r.expected},
       {"forwarded", r.forwarded},
       {"drained", r.drained},
       {"lost", r.lost},
       {"duplicated", r.duplicated},
       {"unexpected", r.unexpected},
       {"after_window", r.outside},
       {"catch_ups", r.catch_ups},
       {"stream_length", r.stream_length},
       {"lateness_ms", r.lateness.to_json()},
       {"fired_in_window", r.fired_in_window},
       {"occurrences_per_s", static_cast<double>(r.fired_in_window) / window_s},
       {"redis_cpu_seconds", r.redis_cpu_seconds},
       {"redis_cpu_us_per_occurrence", per_occurrence_us},
       {"redis_cpu_percent", 100.0 * r.redis_cpu_seconds / window_s},
       {"fcalls", r.fcalls},
       {"command_usec", r.command_usec},
       {"relay_cpu_seconds", r.relay_cpu_seconds},
       {"relay_cpu_percent", 100.0 * r.relay_cpu_seconds / window_s},
       {"relay_peak_rss_mb", r.relay_peak_rss_mb},
       {"refills_asked", r.refills_asked},
       {"refilled", r.refilled},
       {"refill_queue_max", r.refill_queue_max},
       {"refill_queue_end", r.refill_queue_end},
       {"overdue_1s_max", r.overdue_max},
       {"foreign_cpu_percent", r.foreign_cpu_percent},
       {"exit_code", r.exit_code}};
  report.check_integrity("recur", r.lost, r.duplicated, r.unexpected);
  Table t{"recur: " + std::to_string(r.schedules) + " recurring schedules, each once a minute (" + ctx.recur_rule +
              "), " + std::to_string(r.minutes) + " min",
          {"measure", "result"},
          {},
          {"Created pipelined 128 deep with the relay stopped; memory = used_memory after creation minus before, / "
           "schedules, before anything fired (the stream grows afterwards: no consumer acknowledges, so nothing is "
           "trimmed). Window = first occurrence to " + std::to_string(r.minutes) + " min later. Lateness = fired_ms - "
           "occurrence (Redis clock). Refilled = schedules whose stored horizon moved past the instants the bench "
           "sent; asked = those that fired enough to ask (until the relay stopped, " +
           std::to_string(ctx.sizes.recur_grace_ms) + " ms after the window); left at end = "
           "still queued after the relay stopped."}};
  auto row = [&](const std::string& name, const std::string& value) { t.rows.push_back({name, value}); };
  row("created: seconds / schedules/s / Redis us per set (commandstats)",
      fixed(r.create_seconds, 1) + " / " + fixed(n / r.create_seconds) + " / " +
          fixed(static_cast<double>(r.create_redis_usec) / n, 1));
  row("Redis memory per schedule (bytes)", fixed(memory_per_schedule));
  row("occurrences expected / forwarded / drained after", std::to_string(r.expected) + " / " +
                                                             std::to_string(r.forwarded) + " / " +
                                                             std::to_string(r.drained));
  row("lost / duplicated / unexpected", std::to_string(r.lost) + " / " + std::to_string(r.duplicated) + " / " +
                                            std::to_string(r.unexpected));
  row("stream entries (incl. after the window)", std::to_string(r.stream_length));
  row("occurrences/s fired in the window", fixed(static_cast<double>(r.fired_in_window) / window_s));
  row("lateness p50 / p99 / max ms", r.lateness.format(r.lateness.p50) + " / " + r.lateness.format(r.lateness.p99) +
                                         " / " + r.lateness.format(r.lateness.max));
  row("more than 1 s late (catch-ups)", std::to_string(r.catch_ups));
  row("Redis CPU: s in the window / % / us per occurrence",
      fixed(r.redis_cpu_seconds, 1) + " / " + fixed(100.0 * r.redis_cpu_seconds / window_s, 1) + " / " +
          fixed(per_occurrence_us, 1));
  long long all_usec = 0;
  for (const auto& [name, usec] : r.command_usec) all_usec += usec;
  const auto fcall_usec = r.command_usec.count("fcall") ? r.command_usec.at("fcall") : 0;
  const double occurrences = std::max<double>(1, static_cast<double>(r.fired_in_window));
  row("FCALLs in the window; commandstats us per occurrence: fcall / all commands",
      std::to_string(r.fcalls) + "; " + fixed(static_cast<double>(fcall_usec) / occurrences, 1) + " / " +
          fixed(static_cast<double>(all_usec) / occurrences, 1));
  row("relay CPU: s / % of one core; peak RSS MB",
      fixed(r.relay_cpu_seconds, 1) + " / " + fixed(100.0 * r.relay_cpu_seconds / window_s, 1) + "; " +
          fixed(r.relay_peak_rss_mb, 1));
  row("refills: asked / refilled; queue max / left at end",
      std::to_string(r.refills_asked) + " / " + std::to_string(r.refilled) + "; " + std::to_string(r.refill_queue_max) +
          " / " + std::to_string(r.refill_queue_end));
  row("occurrences >1 s overdue, max sampled", std::to_string(r.overdue_max));
  row("other CPU %", fixed(r.foreign_cpu_percent));
  report.add_table(t);
}

}  // namespace expiry::bench
