// (b) burst and (c) backlog: many tasks due at once, timed from the moment they can fire (the
// due millisecond, or the start of the relay / driver for an existing backlog) until the last
// one is in the stream. Each is run for the relay, the fixed-poll sweeper, and two kinds of
// ceiling: the relay's own expiry_sweep with batches of 100 at several pipeline depths (the best
// is the reference of the targets), and the bare script of src/lua/bench_bare.lua, the same writes
// with no checks, which shows what the checks cost.
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "base/errors.h"
#include "bench/machine_load.h"
#include "bench/redis_probe.h"
#include "bench/relay_process.h"
#include "bench/run_tally.h"
#include "bench/scenarios.h"
#include "bench/stream_reader.h"
#include "bench/sweep_driver.h"
#include "bench/task_writer.h"

namespace expiry::bench {

namespace {

constexpr int kCeilingBatch = 100;            // tasks per expiry_sweep call, as the relay's default
constexpr long long kDrainTimeoutMs = 300000;  // longest wait for a run to forward everything

enum class DrainKind { Burst, Backlog };

struct DrainSystem {
  std::string label;
  std::optional<RelayRole> role;  // a relay process; nullopt: a ceiling driven by the bench
  size_t depth = 1;               // ceiling: sweep calls per round trip
  int batch = kCeilingBatch;      // ceiling: tasks per call
  SweepScript script = SweepScript::Library;
};

struct DrainRun {
  DrainSystem system;
  RunTally tally;
  long long start_ms = 0;      // when the tasks could first be forwarded
  long long drain_ms = 0;      // start to the last fired_ms
  double forward_rate = 0;     // forwarded / drain time
  double spread_rate = 0;      // forwarded / (last - first fired)
  long long setup_ms = 0;      // scheduling time of the run's tasks
  bool schedule_overran = false;  // burst: scheduling ended after the due time
  ProcessUsage usage;
  double foreign_cpu_percent = 0;  // other processes on the machine, % of all cores
  double redis_cpu_seconds = 0;    // Redis's own, from the due time (backlog: start) to the last task
  BlockingSummary blocking;
  int exit_code = 0;
};

// Waits until Redis has expired the overdue tasks' trigger keys (their PX is 100 ms), so a
// backlog run starts with no expired events on the way.
void wait_triggers_expired(SyncConnection& conn, long long expires_before) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    if (keyspace_db0(conn).expires <= expires_before) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  progress("backlog: trigger keys still not expired after 120 s; starting anyway");
}

DrainRun run_one(const BenchContext& ctx, SyncConnection& conn, DrainKind kind, const DrainSystem& system, size_t n) {
  const std::string scenario = kind == DrainKind::Burst ? "burst" : "backlog";
  const std::string prefix = scenario.substr(0, 2) + "-" + system.label + "-";
  progress(scenario + ": " + system.label + ", " + std::to_string(n) + " tasks");
  DrainRun run;
  run.system = system;
  reset_stream(ctx, conn);
  const long long expires_before = keyspace_db0(conn).expires;
  std::unique_ptr<RelayProcess> relay;
  if (kind == DrainKind::Burst && system.role) {
    relay = std::make_unique<RelayProcess>(ctx, *system.role, scenario + "-" + system.label);
    relay->wait_ready(conn);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the startup sweep
  }
  StreamReader reader(ctx.redis, ctx.stream);
  const long long now_ms = redis_time_us(conn) / 1000;
  const auto setup_start = std::chrono::steady_clock::now();
  if (kind == DrainKind::Burst) {
    const long long due = now_ms + 1000 + static_cast<long long>(n / 20);  // assumes >= 20k schedules/s
    schedule_tasks(conn, ctx, prefix, n, ctx.pipeline_depth, [due](size_t) { return TaskDue{ScheduleMode::At, due}; });
    run.start_ms = due;
    run.schedule_overran = wall_ms() >= due;
  } else {
    const long long base = now_ms - 1000;
    schedule_tasks(conn, ctx, prefix, n, ctx.pipeline_depth,
                   [base](size_t i) { return TaskDue{ScheduleMode::At, base - static_cast<long long>(i % 1000)}; });
    wait_triggers_expired(conn, expires_before);
  }
  run.setup_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - setup_start).count();
  BlockingWatch watch(conn);
  const CpuSnapshot cpu0 = cpu_snapshot({ctx.redis_pid, relay ? relay->pid() : 0});
  const double redis_cpu0 = redis_cpu_seconds(conn);
  if (kind == DrainKind::Backlog) {
    run.start_ms = wall_ms();
    if (system.role) relay = std::make_unique<RelayProcess>(ctx, *system.role, scenario + "-" + system.label);
  }
  if (!system.role) {
    sleep_until_wall_ms(run.start_ms);
    drive_sweeps(conn, ctx, system.batch, system.depth, "sweep", system.script);
  }
  if (!reader.wait_for(n, kDrainTimeoutMs)) progress(scenario + ": " + system.label + " did not forward everything");
  run.redis_cpu_seconds = redis_cpu_seconds(conn) - redis_cpu0;
  run.foreign_cpu_percent = foreign_cpu_percent(cpu0, cpu_snapshot({ctx.redis_pid, relay ? relay->pid() : 0}));
  run.blocking = watch.finish(conn);
  if (relay) {
    run.usage = relay->usage();
    run.exit_code = relay->stop();
  }
  drain_due_tasks(ctx, conn);
  run.tally = tally_run(finish_reader(ctx, conn, reader), prefix, n, run.start_ms, static_cast<double>(kDrainTimeoutMs));
  run.drain_ms = run.tally.last_fired_ms - run.start_ms;
  run.forward_rate = static_cast<double>(run.tally.forwarded) * 1000.0 / static_cast<double>(std::max(1LL, run.drain_ms));
  const long long spread = run.tally.last_fired_ms - run.tally.first_fired_ms;
  run.spread_rate = static_cast<double>(run.tally.forwarded) * 1000.0 / static_cast<double>(std::max(1LL, spread));
  return run;
}

// The ceilings (library and bare script at each configured depth), then the relay and fixed-poll.
std::vector<DrainSystem> drain_systems(const BenchContext& ctx) {
  std::vector<DrainSystem> systems;
  for (int depth : ctx.sizes.ceiling_depths) {
    systems.push_back({"ceiling-d" + std::to_string(depth), std::nullopt, static_cast<size_t>(depth)});
  }
  for (const auto& [batch, depth] : ctx.sizes.bare_ceilings) {
    systems.push_back({"bare-b" + std::to_string(batch) + "-d" + std::to_string(depth), std::nullopt,
                       static_cast<size_t>(depth), batch, SweepScript::Bare});
  }
  systems.push_back({"relay", RelayRole::Relay, 1});
  systems.push_back({"fixed-poll", RelayRole::FixedPoll, 1});
  return systems;
}

// Each system's fastest round, and its rate in every round.
struct DrainRounds {
  std::vector<DrainRun> runs;
  std::vector<std::vector<double>> rates;
};

// Rounds interleave the systems, so a spell of load on the machine spreads over all of them;
// each system's row is its fastest round.
DrainRounds run_rounds(const BenchContext& ctx, SyncConnection& conn, BenchReport& report, DrainKind kind,
                       const std::vector<DrainSystem>& systems, size_t n) {
  const std::string scenario = kind == DrainKind::Burst ? "burst" : "backlog";
  DrainRounds rounds{std::vector<DrainRun>(systems.size()), std::vector<std::vector<double>>(systems.size())};
  for (int round = 0; round < ctx.sizes.drain_rounds; ++round) {
    for (size_t i = 0; i < systems.size(); ++i) {
      DrainRun r = run_one(ctx, conn, kind, systems[i], n);
      report.check_integrity(scenario + "/" + systems[i].label + "/round-" + std::to_string(round + 1), r.tally.lost,
                             r.tally.duplicated, r.tally.foreign);
      rounds.rates[i].push_back(r.forward_rate);
      if (round == 0 || r.forward_rate > rounds.runs[i].forward_rate) rounds.runs[i] = std::move(r);
    }
  }
  return rounds;
}

// The fastest library ceiling and the fastest bare-script ceiling, the references of the rows.
struct BestCeilings {
  double ceiling = 0;
  double bare = 0;
  std::string ceiling_label;
  std::string bare_label;
};

BestCeilings best_ceilings(const std::vector<DrainRun>& runs) {
  BestCeilings best;
  for (const auto& r : runs) {
    if (r.system.role) continue;
    const bool bare = r.system.script == SweepScript::Bare;
    double& rate = bare ? best.bare : best.ceiling;
    if (r.forward_rate > rate) {
      rate = r.forward_rate;
      (bare ? best.bare_label : best.ceiling_label) = r.system.label;
    }
  }
  return best;
}

double ratio(double rate, double reference) { return reference > 0 ? rate / reference : 0; }

Table drain_table(const BenchContext& ctx, bool burst, size_t n, const BestCeilings& best) {
  Table t{burst ? "(b) burst: " + std::to_string(n) + " tasks due in the same millisecond"
                : "(c) backlog: " + std::to_string(n) + " tasks overdue before the relay starts",
          {"system", "tasks", "drain ms", "fwd/s", "% of best ceiling", "% of best bare", "spread fwd/s", "p50 ms", "p99 ms",
           "p99.9 ms", "max ms", "arrival max ms", "lost", "dup", "CPU s", "peak RSS MB", "calls >5 ms",
           "longest call us", "latency max ms", "other CPU %", "fwd/s of each round"},
          {},
          {}};
  t.notes.push_back("Each row is the fastest of " + std::to_string(ctx.sizes.drain_rounds) +
                    " interleaved round(s); every round counts for lost/dup.");
  t.notes.push_back(burst ? "Drain = from the due millisecond to the last fired_ms; lateness = fired_ms - due_ms."
                          : "Drain = from the relay's process start (or the ceiling driver's first call) to the last "
                            "fired_ms; lateness = fired_ms - that start.");
  t.notes.push_back("fwd/s = tasks / drain; spread fwd/s = tasks / (last - first fired_ms). The ceiling: FCALL "
                    "expiry_sweep (the relay's script) with batches of 100 from the bench, ceiling-dN = N calls per "
                    "round trip; best: " + best.ceiling_label + ". bare-bB-dN: expiry_bench_bare_sweep (the same writes, no "
                    "checks, no time budget), B tasks per call, N calls per round trip; best: " + best.bare_label +
                    ". Calls >5 ms and longest call: SLOWLOG; latency max: LATENCY LATEST (any event, e.g. "
                    "expire-cycle). Other CPU %: processes other than the bench, its Redis and its relay, % of all cores.");
  return t;
}

std::vector<std::string> drain_row(const DrainRun& r, const std::vector<double>& rates, size_t n,
                                   const BestCeilings& best) {
  std::string each;
  for (double rate : rates) each += (each.empty() ? "" : " ") + fixed(rate);
  const auto& f = r.tally.fired;
  return {r.system.label, std::to_string(n), std::to_string(r.drain_ms), fixed(r.forward_rate),
          fixed(100.0 * ratio(r.forward_rate, best.ceiling)), fixed(100.0 * ratio(r.forward_rate, best.bare)),
          fixed(r.spread_rate), f.format(f.p50), f.format(f.p99), f.format(f.p999), f.format(f.max),
          r.tally.arrival.format(r.tally.arrival.max), std::to_string(r.tally.lost),
          std::to_string(r.tally.duplicated), r.system.role ? fixed(r.usage.cpu_seconds, 2) : "-",
          r.system.role ? fixed(r.usage.peak_rss_mb, 1) : "-", std::to_string(r.blocking.slow_calls),
          std::to_string(r.blocking.max_call_us), std::to_string(r.blocking.latency_max_ms),
          fixed(r.foreign_cpu_percent), each};
}

nlohmann::json drain_run_json(const DrainRun& r, const std::vector<double>& rates, const BestCeilings& best) {
  auto rj = tally_json(r.tally);
  rj["start_ms"] = r.start_ms;
  rj["drain_ms"] = r.drain_ms;
  rj["forward_rate"] = r.forward_rate;
  rj["spread_rate"] = r.spread_rate;
  rj["ratio_to_best_ceiling"] = ratio(r.forward_rate, best.ceiling);
  rj["ratio_to_best_bare"] = ratio(r.forward_rate, best.bare);
  rj["setup_ms"] = r.setup_ms;
  rj["schedule_overran_due"] = r.schedule_overran;
  rj["blocking"] = r.blocking.to_json();
  rj["foreign_cpu_percent"] = r.foreign_cpu_percent;
  rj["redis_cpu_seconds"] = r.redis_cpu_seconds;
  rj["forward_rate_of_each_round"] = rates;
  if (r.system.role) {
    rj["cpu_seconds"] = r.usage.cpu_seconds;
    rj["peak_rss_mb"] = r.usage.peak_rss_mb;
    rj["exit_code"] = r.exit_code;
  } else {
    rj["depth"] = r.system.depth;
    rj["batch"] = r.system.batch;
    rj["script"] = r.system.script == SweepScript::Bare ? "expiry_bench_bare_sweep" : "expiry_sweep";
  }
  return rj;
}

void run_drain_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report, DrainKind kind) {
  const bool burst = kind == DrainKind::Burst;
  const size_t n = burst ? ctx.sizes.burst_tasks : ctx.sizes.backlog_tasks;
  conn.checked({"FLUSHALL"});
  load_bare_script(conn);
  const DrainRounds rounds = run_rounds(ctx, conn, report, kind, drain_systems(ctx), n);
  const BestCeilings best = best_ceilings(rounds.runs);
  auto& j = report.scenario(burst ? "burst" : "backlog");
  j["tasks"] = n;
  j["best_ceiling"] = {{"system", best.ceiling_label}, {"tasks_per_s", best.ceiling}};
  j["best_bare"] = {{"system", best.bare_label}, {"tasks_per_s", best.bare}};
  Table t = drain_table(ctx, burst, n, best);
  for (size_t i = 0; i < rounds.runs.size(); ++i) {
    const DrainRun& r = rounds.runs[i];
    t.rows.push_back(drain_row(r, rounds.rates[i], n, best));
    if (r.schedule_overran) t.notes.push_back(r.system.label + ": scheduling ended after the due time.");
    j["runs"][r.system.label] = drain_run_json(r, rounds.rates[i], best);
  }
  report.add_table(t);
}

}  // namespace

void run_burst_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  run_drain_scenario(ctx, conn, report, DrainKind::Burst);
}

void run_backlog_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  run_drain_scenario(ctx, conn, report, DrainKind::Backlog);
}

}  // namespace expiry::bench
