// cluster: the relay on one Redis and on a Redis Cluster, in the same run and with the same load.
// Per mode: a far-future backdrop spread over the buckets, then
// - steady: the steady scenario's producer (one FCALL expiry_schedule at a time, paced, delays
//   2-3 s), lateness = fired_ms - due_ms;
// - drain: a burst of tasks due in the same millisecond, claims/s = tasks / (last fired_ms - due).
// Redis CPU is INFO cpu (used_cpu_sys + used_cpu_user) summed over the primaries, its delta over
// the window divided by the tasks forwarded: for steady the window holds the producer's schedules
// too, for drain only the claims (and the bench's polling of XLEN, one call per stream every
// 10 ms). Nothing reads the streams during a window (a reader would add Redis CPU, and 64 times as
// many calls on the cluster); they are read with XRANGE afterwards to count lost and duplicated.
#include <algorithm>
#include <chrono>
#include <thread>

#include "base/errors.h"
#include "bench/relay_process.h"
#include "bench/run_tally.h"
#include "bench/scenarios.h"
#include "bench/task_target.h"
#include "harness/child_process.h"

namespace expiry::bench {

namespace {

constexpr long long kDrainTimeoutMs = 300000;
constexpr std::chrono::seconds kIdleWindow{2};  // steady: Redis's own CPU measured before the load

struct Window {
  RedisCpu cpu0, cpu1;
  ProcessUsage relay0, relay1;
  double seconds = 0;

  double redis_us_per(size_t tasks) const {
    return tasks == 0 ? 0 : (cpu1.primaries - cpu0.primaries) * 1e6 / static_cast<double>(tasks);
  }
  // As redis_us_per, less what the primaries spend idle (`idle_ms_per_s`) over the window.
  double net_us_per(size_t tasks, double idle_ms_per_s) const {
    return tasks == 0 ? 0
                      : ((cpu1.primaries - cpu0.primaries) - idle_ms_per_s / 1000.0 * seconds) * 1e6 /
                            static_cast<double>(tasks);
  }
  double replica_us_per(size_t tasks) const {
    return tasks == 0 ? 0 : (cpu1.replicas - cpu0.replicas) * 1e6 / static_cast<double>(tasks);
  }
  double relay_cpu_percent() const {
    return seconds > 0 ? 100.0 * (relay1.cpu_seconds - relay0.cpu_seconds) / seconds : 0;
  }
};

struct PhaseRun {
  RunTally tally;
  double idle_ms_per_s = 0;   // steady: the primaries' CPU with the relay up and nothing due
  Window window;
  double schedule_rate = 0;   // steady
  double forward_rate = 0;    // steady: forwarded / (last - first fired); drain: forwarded / (last fired - due)
  long long drain_ms = 0;     // drain
  bool schedule_overran = false;  // drain: scheduling ended after the due time
  int exit_code = 0;
};

struct ModeRun {
  std::string mode;  // "standalone" or "cluster"
  size_t primaries = 1;
  int buckets = 1;
  long long backdrop = 0;
  PhaseRun steady, drain;
};

// Polls the streams' total length every `every` until it reaches n or `deadline_ms` (wall) passes.
void wait_forwarded(TaskTarget& target, size_t n, long long deadline_ms, std::chrono::milliseconds every) {
  while (target.stream_length() < static_cast<long long>(n) && wall_ms() < deadline_ms) {
    std::this_thread::sleep_for(every);
  }
}

PhaseRun run_steady(const BenchContext& ctx, TaskTarget& target, const std::string& mode) {
  const size_t n = static_cast<size_t>(ctx.sizes.cluster_rate) * static_cast<size_t>(ctx.sizes.cluster_seconds);
  const std::string prefix = "cs-" + mode + "-";
  progress("cluster: " + mode + " steady, " + std::to_string(n) + " tasks at " + std::to_string(ctx.sizes.cluster_rate) + "/s");
  target.reset_streams();
  PhaseRun run;
  RelayProcess relay(target.relay_context(), RelayRole::Relay, "cluster-steady-" + mode);
  target.wait_ready(relay);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the startup sweeps
  {
    const RedisCpu idle0 = target.cpu();
    const auto i0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(kIdleWindow);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - i0).count();
    run.idle_ms_per_s = (target.cpu().primaries - idle0.primaries) * 1000.0 / seconds;
  }
  run.window.relay0 = relay.usage();
  run.window.cpu0 = target.cpu();
  const auto t0 = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration<double>(1.0 / ctx.sizes.cluster_rate);
  long long max_due = 0;
  for (size_t i = 0; i < n; ++i) {
    std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * i));
    max_due = std::max(max_due, target.schedule_one(task_id(prefix, i), ScheduleMode::Delay, steady_delay_ms(i)).due_ms);
  }
  run.schedule_rate = static_cast<double>(n) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  wait_forwarded(target, n, max_due + ctx.sizes.cluster_grace_ms, std::chrono::milliseconds(50));
  run.window.cpu1 = target.cpu();
  run.window.relay1 = relay.usage();
  run.window.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.exit_code = relay.stop();
  target.drain_due();
  run.tally = tally_run(target.read_streams(), prefix, n, 0, static_cast<double>(ctx.sizes.cluster_grace_ms));
  const long long span_ms = run.tally.last_fired_ms - run.tally.first_fired_ms;
  run.forward_rate = span_ms > 0 ? static_cast<double>(run.tally.forwarded) * 1000.0 / static_cast<double>(span_ms) : 0;
  return run;
}

PhaseRun run_drain(const BenchContext& ctx, TaskTarget& target, const std::string& mode) {
  const size_t n = ctx.sizes.cluster_burst_tasks;
  const std::string prefix = "cb-" + mode + "-";
  progress("cluster: " + mode + " drain, " + std::to_string(n) + " tasks due in the same millisecond");
  target.reset_streams();
  PhaseRun run;
  RelayProcess relay(target.relay_context(), RelayRole::Relay, "cluster-drain-" + mode);
  target.wait_ready(relay);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const long long due = wall_ms() + 1000 + static_cast<long long>(n / 20);  // assumes >= 20k schedules/s
  target.schedule_many(prefix, n, [due](size_t) { return TaskDue{ScheduleMode::At, due}; });
  run.schedule_overran = wall_ms() >= due - 50;
  sleep_until_wall_ms(due - 50);
  run.window.relay0 = relay.usage();
  run.window.cpu0 = target.cpu();
  const auto t0 = std::chrono::steady_clock::now();
  sleep_until_wall_ms(due);
  wait_forwarded(target, n, due + kDrainTimeoutMs, std::chrono::milliseconds(10));
  run.window.cpu1 = target.cpu();
  run.window.relay1 = relay.usage();
  run.window.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.exit_code = relay.stop();
  target.drain_due();
  run.tally = tally_run(target.read_streams(), prefix, n, due, static_cast<double>(kDrainTimeoutMs));
  run.drain_ms = run.tally.last_fired_ms - due;
  run.forward_rate = static_cast<double>(run.tally.forwarded) * 1000.0 / static_cast<double>(std::max(1LL, run.drain_ms));
  return run;
}

ModeRun run_mode(const BenchContext& ctx, TaskTarget& target, const std::string& mode) {
  ModeRun m;
  m.mode = mode;
  m.buckets = target.buckets();
  m.primaries = target.primary_count();
  target.reset();
  progress("cluster: " + mode + " backdrop, " + std::to_string(ctx.sizes.cluster_backdrop) + " far-future tasks over " +
           std::to_string(m.buckets) + " bucket(s)");
  const long long base = wall_ms() + 86400000LL;
  target.schedule_many("far-", ctx.sizes.cluster_backdrop,
                       [base](size_t i) { return TaskDue{ScheduleMode::At, base + static_cast<long long>(i)}; });
  m.backdrop = static_cast<long long>(ctx.sizes.cluster_backdrop);
  m.steady = run_steady(ctx, target, mode);
  m.drain = run_drain(ctx, target, mode);
  target.reset();  // leaves no tasks behind
  return m;
}

nlohmann::json phase_json(const PhaseRun& p, size_t tasks) {
  auto j = tally_json(p.tally);
  j["forward_rate"] = p.forward_rate;
  j["redis_cpu_us_per_task_primaries"] = p.window.redis_us_per(p.tally.forwarded);
  j["redis_cpu_us_per_task_replicas"] = p.window.replica_us_per(p.tally.forwarded);
  j["redis_cpu_seconds_primaries"] = p.window.cpu1.primaries - p.window.cpu0.primaries;
  j["relay_cpu_percent"] = p.window.relay_cpu_percent();
  j["window_seconds"] = p.window.seconds;
  j["tasks"] = tasks;
  j["exit_code"] = p.exit_code;
  return j;
}

std::string ratio_text(double v, double base) { return base > 0 ? fixed(v / base, 2) : "-"; }

}  // namespace

// (c) An idle consumer on the cluster: order-canceller, its doorbell subscribed on every primary
// and its streams cold (no entry since 3 min_idle + the reclaim interval), nothing appended:
// what it sends each primary per second. --min-idle-ms 1000 shortens the cooling to 4 s.
struct IdleConsumerRun {
  double seconds = 0;
  std::vector<std::map<std::string, long long>> calls;  // per primary, over the window
};

IdleConsumerRun run_idle_consumer(const BenchContext& ctx, TaskTarget& target) {
  using namespace std::chrono_literals;
  target.reset_streams();
  ChildProcess canceller(ctx.canceller_bin,
                         {"--redis-url", ctx.cluster_url, "--namespace", ctx.keys.ns(), "--buckets",
                          std::to_string(target.buckets()), "--group", ctx.group, "--consumer", "bench-idle",
                          "--min-idle-ms", "1000"},
                         {}, ctx.work_dir + "/cluster-idle-consumer.log");
  const auto alive = [&] {
    if (!canceller.running()) throw Error("order-canceller exited; see " + ctx.work_dir + "/cluster-idle-consumer.log");
  };
  const std::string rings = ctx.keys.ns() + ":{*}:ring";
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (target.channels_subscribed(rings) < target.buckets()) {
    alive();
    if (std::chrono::steady_clock::now() > deadline) throw Error("order-canceller's doorbell never subscribed every ring");
    std::this_thread::sleep_for(50ms);
  }
  // Cold: fewer XPENDING in a second than a third of the streams (warm, each gets one a second).
  const auto xpending = [&] {
    long long n = 0;
    for (auto& calls : target.calls_per_primary()) n += calls["xpending"];
    return n;
  };
  deadline = std::chrono::steady_clock::now() + 60s;
  for (long long before = xpending();;) {
    std::this_thread::sleep_for(1s);
    alive();
    const long long now = xpending();
    if (now - before < target.buckets() / 3) break;
    if (std::chrono::steady_clock::now() > deadline) throw Error("the idle consumer's streams never went cold");
    before = now;
  }
  IdleConsumerRun run;
  const auto c0 = target.calls_per_primary();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(ctx.quick ? 5s : 20s);  // the measurement window
  auto c1 = target.calls_per_primary();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  alive();
  for (size_t p = 0; p < c1.size() && p < c0.size(); ++p) {
    std::map<std::string, long long> delta;
    for (const auto& [name, n] : c1[p]) {
      const auto it = c0[p].find(name);
      const long long d = n - (it == c0[p].end() ? 0 : it->second);
      // Left out: the bench's own INFO and PUBSUB, and the replicas' REPLCONF ACKs.
      if (d > 0 && name != "info" && name != "pubsub|channels" && name != "replconf") delta[name] = d;
    }
    run.calls.push_back(delta);
  }
  canceller.terminate();
  return run;
}

void run_cluster_scenario(const BenchContext& ctx, BenchReport& report) {
  if (ctx.cluster_url.empty()) throw ConfigError("the cluster scenario needs --cluster-url");
  std::vector<ModeRun> modes;
  {
    auto single = TaskTarget::single(ctx, ctx.standalone_buckets);
    modes.push_back(run_mode(ctx, *single, "standalone"));
  }
  {
    auto cluster = TaskTarget::cluster(ctx, ctx.cluster_url, ctx.cluster_buckets);
    modes.push_back(run_mode(ctx, *cluster, "cluster"));
  }
  const size_t steady_n = static_cast<size_t>(ctx.sizes.cluster_rate) * static_cast<size_t>(ctx.sizes.cluster_seconds);
  const size_t drain_n = ctx.sizes.cluster_burst_tasks;
  const ModeRun& base = modes.front();
  const double base_steady_cpu = base.steady.window.redis_us_per(base.steady.tally.forwarded);
  const double base_drain_cpu = base.drain.window.redis_us_per(base.drain.tally.forwarded);

  auto& j = report.scenario("cluster");
  j["rate"] = ctx.sizes.cluster_rate;
  j["seconds"] = ctx.sizes.cluster_seconds;
  j["backdrop_pending"] = ctx.sizes.cluster_backdrop;
  j["burst_tasks"] = drain_n;
  j["grace_ms"] = ctx.sizes.cluster_grace_ms;

  Table steady{"cluster (a) steady: " + std::to_string(ctx.sizes.cluster_rate) + " tasks/s for " +
                   std::to_string(ctx.sizes.cluster_seconds) + " s (pseudo-random delays 2-3 s), " +
                   std::to_string(ctx.sizes.cluster_backdrop) + " far-future tasks pending; the relay on one Redis and on a cluster",
               {"mode", "primaries", "buckets", "tasks", "sched/s", "fwd/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms",
                "fwd by deadline", "via sweep/event", "lost", "dup", "Redis CPU us/task", "x standalone",
                "idle Redis CPU ms/s", "us/task net of idle", "replicas CPU us/task", "relay CPU %"},
               {},
               {"Lateness = fired_ms - due_ms (Redis clock). Redis CPU us/task: INFO cpu (used_cpu_sys + used_cpu_user) "
                "summed over the primaries, its delta from the first schedule to the last task forwarded, divided by the "
                "tasks forwarded: one schedule and one claim per task. Replicas CPU: the same over the cluster's replicas "
                "(the single Redis has none). Idle: the primaries' CPU over 2 s before the load, the relay up and "
                "nothing due (cron, cluster bus); net of idle subtracts that rate over the window. Relay CPU % is of one core."}};
  Table drain{"cluster (b) drain: " + std::to_string(drain_n) +
                  " tasks due in the same millisecond; the relay on one Redis and on a cluster",
              {"mode", "primaries", "buckets", "tasks", "drain ms", "claims/s", "claims/s per primary", "p50 ms", "p99 ms",
               "max ms", "via sweep/event", "lost", "dup", "Redis CPU us/claim", "x standalone", "us/claim net of idle",
               "replicas CPU us/claim", "relay CPU s", "scheduling overran"},
              {},
              {"Drain = from the due millisecond to the last fired_ms; claims/s = tasks / drain. Redis CPU us/claim: the "
               "primaries' INFO cpu delta from 50 ms before the due time until the bench saw every task in the streams "
               "(it polls XLEN of every stream every 10 ms), divided by the tasks forwarded; net of idle subtracts the steady run's idle rate over the window. "
               "Via event: tasks claimed on their expired event instead of by a sweep. On a 2-core machine the "
               "cluster's 3 primaries and 3 replicas share the cores the single Redis had: this shows the per-claim cost, "
               "not the scaling (docs/benchmarks.md, \"Cluster\")."}};
  for (const ModeRun& m : modes) {
    const auto& s = m.steady;
    const auto& f = s.tally.fired;
    const auto via = [](const RunTally& t, const char* k) {
      const auto it = t.via.find(k);
      return it == t.via.end() ? size_t{0} : it->second;
    };
    const auto via_text = [&](const RunTally& t) {
      return std::to_string(via(t, "sweep")) + "/" + std::to_string(via(t, "event"));
    };
    const double steady_cpu = s.window.redis_us_per(s.tally.forwarded);
    steady.rows.push_back({m.mode, std::to_string(m.primaries), std::to_string(m.buckets), std::to_string(steady_n),
                           fixed(s.schedule_rate), fixed(s.forward_rate), f.format(f.p50), f.format(f.p99),
                           f.format(f.p999), f.format(f.max), std::to_string(s.tally.forwarded),
                           via_text(s.tally), std::to_string(s.tally.lost), std::to_string(s.tally.duplicated),
                           fixed(steady_cpu, 1), ratio_text(steady_cpu, base_steady_cpu), fixed(s.idle_ms_per_s, 1),
                           fixed(s.window.net_us_per(s.tally.forwarded, s.idle_ms_per_s), 1),
                           fixed(s.window.replica_us_per(s.tally.forwarded), 1),
                           fixed(s.window.relay_cpu_percent(), 1)});
    const auto& d = m.drain;
    const auto& df = d.tally.fired;
    const double drain_cpu = d.window.redis_us_per(d.tally.forwarded);
    drain.rows.push_back({m.mode, std::to_string(m.primaries), std::to_string(m.buckets), std::to_string(drain_n),
                          std::to_string(d.drain_ms), fixed(d.forward_rate),
                          fixed(d.forward_rate / static_cast<double>(m.primaries)), df.format(df.p50),
                          df.format(df.p99), df.format(df.max), via_text(d.tally), std::to_string(d.tally.lost),
                          std::to_string(d.tally.duplicated), fixed(drain_cpu, 1), ratio_text(drain_cpu, base_drain_cpu),
                          fixed(d.window.net_us_per(d.tally.forwarded, s.idle_ms_per_s), 1),
                          fixed(d.window.replica_us_per(d.tally.forwarded), 1),
                          fixed(d.window.relay1.cpu_seconds - d.window.relay0.cpu_seconds, 2),
                          d.schedule_overran ? "yes" : "no"});
    auto& mj = j["runs"][m.mode];
    mj["primaries"] = m.primaries;
    mj["buckets"] = m.buckets;
    mj["steady"] = phase_json(s, steady_n);
    mj["steady"]["schedule_rate"] = s.schedule_rate;
    mj["idle_redis_cpu_ms_per_s_primaries"] = s.idle_ms_per_s;
    mj["steady"]["redis_cpu_us_per_task_net_of_idle"] = s.window.net_us_per(s.tally.forwarded, s.idle_ms_per_s);
    mj["drain"]["redis_cpu_us_per_task_net_of_idle"] = d.window.net_us_per(d.tally.forwarded, s.idle_ms_per_s);
    mj["drain"] = phase_json(d, drain_n);
    mj["drain"]["drain_ms"] = d.drain_ms;
    mj["drain"]["claims_per_s_per_primary"] = d.forward_rate / static_cast<double>(m.primaries);
    mj["drain"]["schedule_overran"] = d.schedule_overran;
    report.check_integrity("cluster/" + m.mode + "/steady", s.tally.lost, s.tally.duplicated, s.tally.foreign);
    report.check_integrity("cluster/" + m.mode + "/drain", d.tally.lost, d.tally.duplicated, d.tally.foreign);
  }
  const ModeRun& c = modes.back();
  j["cluster_vs_standalone"] = {
      {"steady_p99_diff_ms", c.steady.tally.fired.p99 - base.steady.tally.fired.p99},
      {"steady_cpu_ratio", base_steady_cpu > 0 ? c.steady.window.redis_us_per(c.steady.tally.forwarded) / base_steady_cpu : -1},
      {"drain_cpu_ratio", base_drain_cpu > 0 ? c.drain.window.redis_us_per(c.drain.tally.forwarded) / base_drain_cpu : -1},
      {"claims_per_s_ratio", base.drain.forward_rate > 0 ? c.drain.forward_rate / base.drain.forward_rate : -1}};
  report.add_table(steady);
  report.add_table(drain);

  auto cluster = TaskTarget::cluster(ctx, ctx.cluster_url, ctx.cluster_buckets);
  const IdleConsumerRun idle = run_idle_consumer(ctx, *cluster);
  Table idle_table{"cluster (c) an idle consumer (order-canceller, " + std::to_string(ctx.cluster_buckets) +
                       " bucket streams, nothing appended): what it sends each primary per second over " +
                       fixed(idle.seconds, 0) + " s",
                   {"primary", "reads/s (XREADGROUP + XPENDING)", "XREADGROUP/s", "XPENDING/s", "all commands/s",
                    "target reads/s"},
                   {},
                   {"INFO commandstats deltas of each primary, the bench's own INFO and PUBSUB calls and the replicas' REPLCONF left out. The "
                    "consumer reads a bucket stream when a claim rings its doorbell, else once per --safety-poll-ms "
                    "(30 s); it looks for pending entries (XPENDING) on streams rung lately, else every other safety "
                    "turn. Before the doorbell: about 21 XREADGROUPs per primary every 50 ms (420/s)."}};
  nlohmann::json idle_json = nlohmann::json::array();
  for (size_t p = 0; p < idle.calls.size(); ++p) {
    const auto get = [&](const char* name) {
      const auto it = idle.calls[p].find(name);
      return it == idle.calls[p].end() ? 0.0 : static_cast<double>(it->second) / idle.seconds;
    };
    double all = 0;
    for (const auto& [name, n] : idle.calls[p]) all += static_cast<double>(n) / idle.seconds;
    const double reads = get("xreadgroup") + get("xpending");
    idle_table.rows.push_back({std::to_string(p + 1), fixed(reads, 2), fixed(get("xreadgroup"), 2),
                               fixed(get("xpending"), 2), fixed(all, 2), reads <= 2.0 ? "<= 2: met" : "<= 2: NOT met"});
    idle_json.push_back({{"reads_per_s", reads}, {"xreadgroup_per_s", get("xreadgroup")},
                         {"xpending_per_s", get("xpending")}, {"commands_per_s", all}, {"calls", idle.calls[p]}});
  }
  j["idle_consumer"] = {{"seconds", idle.seconds}, {"primaries", idle_json}};
  report.add_table(idle_table);
}

}  // namespace expiry::bench
