// (a) steady: a producer schedules tasks at a fixed rate (one FCALL at a time, delays spread over
// 2-3 s) into a schedule that also holds a far-future backdrop, with unrelated TTL keys in
// Redis; the relay, the events-only listener and the fixed-poll sweeper each get the same load.
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <thread>

#include "base/errors.h"
#include "bench/machine_load.h"
#include "bench/redis_pinger.h"
#include "bench/redis_probe.h"
#include "bench/relay_process.h"
#include "bench/run_tally.h"
#include "bench/scenarios.h"
#include "bench/stream_reader.h"
#include "bench/task_writer.h"

namespace expiry::bench {

// A fixed pseudo-random delay per task (splitmix64), so due times are spread evenly over the
// window like independent producers' would be. (i * 7919) % 1000, used before, put every 25th
// task on the same due millisecond: a 25-task burst every 25 ms instead of a steady flow.
long long steady_delay_ms(size_t i) {
  constexpr long long kDelayBaseMs = 2000;
  constexpr long long kDelaySpreadMs = 1000;
  uint64_t z = static_cast<uint64_t>(i) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return kDelayBaseMs + static_cast<long long>(z % static_cast<uint64_t>(kDelaySpreadMs));
}

namespace {

void ensure_ttl_keys(SyncConnection& conn, size_t n) {
  if (n == 0 || conn.checked({"EXISTS", "unrelated:" + std::to_string(n - 1)}).integer == 1) return;
  progress("steady: " + std::to_string(n) + " unrelated keys with a 1-day TTL");
  run_pipelined(
      conn, n, 256, [](size_t i) { return std::vector<std::string>{"SET", "unrelated:" + std::to_string(i), "x", "EX", "86400"}; },
      [](size_t, const Reply& r) {
        if (r.failed()) throw Error("SET: " + r.str);
      });
}

struct SteadyRun {
  RunTally tally;
  double schedule_rate = 0;
  double forward_rate = 0;
  double window_seconds = 0;
  double cpu_seconds = 0;     // whole life of the relay process
  double cpu_percent = 0;     // during the scheduling + forwarding window
  double peak_rss_mb = 0;
  double foreign_cpu_percent = 0;  // other processes on the machine, % of all cores
  double redis_cpu_seconds = 0;    // Redis's own, over the scheduling and forwarding window
  nlohmann::json redis_cost;       // the same window's redis_cost_delta: CPU by command
  BlockingSummary blocking;
  RedisPinger::Result ping;  // Redis's own responsiveness meanwhile
  int exit_code = 0;
};

// "due_ms fired_ms arrival_us via" per forwarded task, in stream order: when late tasks happened.
void write_entries(const std::string& path, const std::vector<ReceivedEntry>& entries) {
  std::ofstream out(path);
  for (const auto& e : entries) {
    if (!e.task) continue;  // not a forwarded task's entry
    out << e.task->due_ms << " " << e.task->fired_ms << " " << e.arrival_us << " " << e.task->via << "\n";
  }
}

SteadyRun run_one(const BenchContext& ctx, SyncConnection& conn, RelayRole role) {
  const size_t n = static_cast<size_t>(ctx.sizes.steady_rate) * static_cast<size_t>(ctx.sizes.steady_seconds);
  const std::string name = role_name(role);
  const std::string prefix = "st-" + name + "-";
  progress("steady: " + name + ", " + std::to_string(n) + " tasks at " + std::to_string(ctx.sizes.steady_rate) + "/s");
  reset_stream(ctx, conn);
  SteadyRun run;
  RelayProcess relay(ctx, role, "steady-" + name);
  relay.wait_ready(conn);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the startup sweep
  StreamReader reader(ctx.redis, ctx.stream);
  RedisPinger pinger(ctx.redis);
  BlockingWatch watch(conn);
  const ProcessUsage u0 = relay.usage();
  const CpuSnapshot cpu0 = cpu_snapshot({ctx.redis_pid, relay.pid()});
  const RedisCostSnapshot cost0 = redis_cost_snapshot(conn);
  const auto t0 = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration<double>(1.0 / ctx.sizes.steady_rate);
  // Producer k schedules tasks k, k + P, ... at their own instants, one call at a time on its own
  // connection: P producers keep up with rates one round trip at a time cannot.
  const size_t producers = std::max<size_t>(1, ctx.sizes.steady_producers);
  std::vector<long long> max_due_of(producers, 0);
  std::vector<std::string> failure_of(producers);
  auto produce = [&](size_t k, SyncConnection& c) {
    try {
      for (size_t i = k; i < n; i += producers) {
        std::this_thread::sleep_until(t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * i));
        const std::string id = task_id(prefix, i);
        const Reply r = c.command(schedule_argv(ctx.keys, id, ScheduleMode::Delay, steady_delay_ms(i),
                                                task_payload(id, ctx.payload_bytes), {}, ctx.redis.db));
        const auto result = decode_schedule(r);
        if (!result) throw Error("FCALL expiry_schedule: " + r.describe());
        max_due_of[k] = std::max(max_due_of[k], result->due_ms);
      }
    } catch (const std::exception& e) {
      failure_of[k] = e.what();
    }
  };
  std::vector<std::unique_ptr<SyncConnection>> extra;
  for (size_t k = 1; k < producers; ++k) extra.push_back(std::make_unique<SyncConnection>(ctx.redis));
  std::vector<std::thread> threads;
  for (size_t k = 1; k < producers; ++k) threads.emplace_back(produce, k, std::ref(*extra[k - 1]));
  produce(0, conn);
  for (auto& t : threads) t.join();
  for (const auto& f : failure_of) {
    if (!f.empty()) throw Error(f);
  }
  const long long max_due = *std::max_element(max_due_of.begin(), max_due_of.end());
  const double schedule_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.schedule_rate = static_cast<double>(n) / schedule_seconds;
  const long long deadline = max_due + ctx.sizes.steady_grace_ms;
  reader.wait_for(n, std::max(0LL, deadline - wall_ms()));
  run.redis_cost = redis_cost_delta(cost0, redis_cost_snapshot(conn));
  run.redis_cpu_seconds = run.redis_cost["cpu_seconds"].get<double>();
  const ProcessUsage u1 = relay.usage();
  run.foreign_cpu_percent = foreign_cpu_percent(cpu0, cpu_snapshot({ctx.redis_pid, relay.pid()}));
  run.window_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.blocking = watch.finish(conn);
  run.ping = pinger.finish();
  run.exit_code = relay.stop();
  drain_due_tasks(ctx, conn);
  const std::vector<ReceivedEntry> entries = finish_reader(ctx, conn, reader);
  write_entries(ctx.work_dir + "/steady-" + name + "-tasks.dat", entries);
  run.tally = tally_run(entries, prefix, n, 0, static_cast<double>(ctx.sizes.steady_grace_ms));
  const long long span_ms = run.tally.last_fired_ms - run.tally.first_fired_ms;
  run.forward_rate = span_ms > 0 ? static_cast<double>(run.tally.forwarded) * 1000.0 / static_cast<double>(span_ms) : 0;
  run.cpu_seconds = u1.cpu_seconds;
  run.cpu_percent = 100.0 * (u1.cpu_seconds - u0.cpu_seconds) / run.window_seconds;
  run.peak_rss_mb = u1.peak_rss_mb;
  return run;
}

// "lateness_ms fraction" lines for a CDF plot; the fraction is of all `total` tasks, so tasks
// not forwarded by the deadline keep the curve below 1.
void write_cdf(const std::string& path, std::vector<double> values, size_t total) {
  std::sort(values.begin(), values.end());
  std::ofstream out(path);
  for (size_t i = 0; i < values.size(); ++i) {
    out << values[i] << " " << static_cast<double>(i + 1) / static_cast<double>(total) << "\n";
  }
}

}  // namespace

void run_steady_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  ensure_backdrop(ctx, conn, ctx.sizes.steady_backdrop);
  ensure_ttl_keys(conn, ctx.sizes.steady_ttl_keys);
  const KeyspaceCounts keyspace = keyspace_db0(conn);
  const long long backdrop = conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer;
  auto& j = report.scenario("steady");
  j["rate"] = ctx.sizes.steady_rate;
  j["seconds"] = ctx.sizes.steady_seconds;
  j["backdrop_pending"] = backdrop;
  j["keys_with_ttl"] = keyspace.expires;
  j["unrelated_ttl_keys"] = ctx.sizes.steady_ttl_keys;
  j["producers"] = ctx.sizes.steady_producers;
  j["grace_ms"] = ctx.sizes.steady_grace_ms;
  const size_t n = static_cast<size_t>(ctx.sizes.steady_rate) * static_cast<size_t>(ctx.sizes.steady_seconds);

  Table t{"(a) steady: " + std::to_string(ctx.sizes.steady_rate) + " tasks/s for " +
              std::to_string(ctx.sizes.steady_seconds) + " s (pseudo-random delays 2-3 s), " + std::to_string(backdrop) +
              " far-future tasks pending, " + std::to_string(keyspace.expires) + " keys with a TTL",
          {"system", "tasks", "sched/s", "fwd/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "arrival p50/p99 ms",
           "fwd by deadline", "via sweep/event", "lost", "dup", "CPU s", "CPU %", "peak RSS MB", "calls >5 ms",
           "Redis PING p99/max ms", "PINGs >5 ms", "other CPU %"},
          {},
          {"Lateness = fired_ms - due_ms (Redis clock). A task not forwarded by " +
           std::to_string(ctx.sizes.steady_grace_ms) +
           " ms after the last due time counts as later than that (\">N\"); the bench then forwards it itself "
           "(via=bench-drain) to check that nothing was lost. CPU % is of one core, over the scheduling and "
           "forwarding window. Other CPU % = CPU used by processes other than the bench, its Redis and its relay, "
           "in % of all cores: above 10 the run shared the machine. Redis PING: round trips of a PING sent every 10 ms "
           "on a connection of its own during the run; slow PINGs mean Redis, or the machine under it, stalled."}};
  for (RelayRole role : {RelayRole::Relay, RelayRole::EventsOnly, RelayRole::FixedPoll}) {
    const std::string name = role_name(role);
    if (ctx.steady_systems.count(name) == 0) continue;
    const SteadyRun r = run_one(ctx, conn, role);
    const auto& f = r.tally.fired;
    auto via = [&](const char* k) {
      const auto it = r.tally.via.find(k);
      return it == r.tally.via.end() ? size_t{0} : it->second;
    };
    t.rows.push_back({name, std::to_string(n), fixed(r.schedule_rate), fixed(r.forward_rate), f.format(f.p50),
                      f.format(f.p99), f.format(f.p999), f.format(f.max),
                      r.tally.arrival.format(r.tally.arrival.p50) + " / " + r.tally.arrival.format(r.tally.arrival.p99),
                      std::to_string(r.tally.forwarded), std::to_string(via("sweep")) + "/" + std::to_string(via("event")),
                      std::to_string(r.tally.lost), std::to_string(r.tally.duplicated), fixed(r.cpu_seconds, 2),
                      fixed(r.cpu_percent, 1), fixed(r.peak_rss_mb, 1),
                      std::to_string(r.blocking.slow_calls),
                      r.ping.rtt.format(r.ping.rtt.p99) + " / " + r.ping.rtt.format(r.ping.rtt.max),
                      std::to_string(r.ping.over_5ms), fixed(r.foreign_cpu_percent)});
    auto rj = tally_json(r.tally);
    rj["schedule_rate"] = r.schedule_rate;
    rj["forward_rate"] = r.forward_rate;
    rj["cpu_seconds"] = r.cpu_seconds;
    rj["cpu_percent"] = r.cpu_percent;
    rj["peak_rss_mb"] = r.peak_rss_mb;
    rj["window_seconds"] = r.window_seconds;
    rj["blocking"] = r.blocking.to_json();
    rj["redis_ping_ms"] = r.ping.rtt.to_json();
    rj["redis_pings_over_5ms"] = r.ping.over_5ms;
    rj["foreign_cpu_percent"] = r.foreign_cpu_percent;
    rj["redis_cpu_seconds"] = r.redis_cpu_seconds;
    rj["redis_cpu_us_per_task"] = r.redis_cpu_seconds * 1e6 / static_cast<double>(n);
    rj["redis_cost"] = r.redis_cost;
    rj["exit_code"] = r.exit_code;
    j["runs"][name] = rj;
    report.check_integrity("steady/" + name, r.tally.lost, r.tally.duplicated, r.tally.foreign);
    write_cdf(ctx.work_dir + "/steady-cdf-" + name + ".dat", r.tally.fired_ms_values, n);
  }
  report.add_table(t);
}

}  // namespace expiry::bench
