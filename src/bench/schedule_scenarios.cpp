// The producer-side scenarios: (d) bulk scheduling with expiry-ctl against the bare pipelined
// script, with Redis memory per pending task, and (e) cancel throughput and latency.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>

#include "io/process/child_process.h"
#include "bench/lateness_stats.h"
#include "bench/machine_load.h"
#include "bench/redis_probe.h"
#include "bench/scenarios.h"
#include "bench/task_writer.h"
#include "protocol/errors.h"
#include "protocol/integers.h"

namespace expiry::bench {

namespace {

constexpr size_t kMemorySamples = 200;  // keys sampled per type with MEMORY USAGE

struct KeyMemory {
  double trigger_bytes = 0;      // NS:{0}:t:<id>, string with a TTL
  double shadow_bytes = 0;       // NS:{0}:task:<id>, hash
  double zset_member_bytes = 0;  // MEMORY USAGE of the schedule ZSET / its cardinality
  std::string shadow_encoding;   // OBJECT ENCODING of a shadow hash: listpack or hashtable
  std::string listpack_value;    // CONFIG GET hash-max-listpack-value
};

KeyMemory sample_key_memory(const BenchContext& ctx, SyncConnection& conn, const std::string& prefix, size_t n) {
  KeyMemory m;
  const size_t samples = std::min(kMemorySamples, n);
  for (size_t s = 0; s < samples; ++s) {
    const std::string id = task_id(prefix, s * n / samples);
    conn.append({"MEMORY", "USAGE", ctx.keys.trigger_key(id), "SAMPLES", "0"});
    conn.append({"MEMORY", "USAGE", ctx.keys.shadow_key(id), "SAMPLES", "0"});
  }
  for (size_t s = 0; s < samples; ++s) {
    m.trigger_bytes += static_cast<double>(conn.read_reply().integer);
    m.shadow_bytes += static_cast<double>(conn.read_reply().integer);
  }
  m.trigger_bytes /= static_cast<double>(samples);
  m.shadow_bytes /= static_cast<double>(samples);
  const long long zset = conn.checked({"MEMORY", "USAGE", ctx.keys.schedule_key(), "SAMPLES", "0"}).integer;
  const long long card = conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer;
  m.zset_member_bytes = card > 0 ? static_cast<double>(zset) / static_cast<double>(card) : 0;
  m.shadow_encoding = conn.checked({"OBJECT", "ENCODING", ctx.keys.shadow_key(task_id(prefix, 0))}).str;
  const Reply limit = conn.checked({"CONFIG", "GET", "hash-max-listpack-value"});
  if (limit.elements.size() == 2) m.listpack_value = limit.elements[1].str;
  return m;
}

// Escapes the payload (which holds only printable ASCII and quotes) as a JSON string body.
std::string json_string_body(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

void write_bulk_file(const BenchContext& ctx, const std::string& path, const std::string& prefix, size_t n,
                     long long base_ms) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (size_t i = 0; i < n; ++i) {
    const std::string id = task_id(prefix, i);
    out << "{\"id\":\"" << id << "\",\"at_ms\":" << base_ms + static_cast<long long>(i) << ",\"payload\":\""
        << json_string_body(task_payload(id, ctx.payload_bytes)) << "\"}\n";
  }
  if (!out) throw Error("cannot write " + path);
}

// The "in N ms" of expiry-ctl's "scheduled N tasks (R replaced) in X ms" line, or -1.
long long ctl_reported_ms(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line;
  const std::regex re(R"(scheduled (\d+) tasks \(\d+ replaced\) in (\d+) ms)");
  std::smatch m;
  long long ms = -1;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, re)) ms = parse_int64(m[2].str()).value_or(-1);
  }
  return ms;
}

// One ceiling run: the bare script pipelined from the bench.
struct CeilingRun {
  std::string label;
  size_t depth;
  int windows;
  double seconds = 0;
  double rate = 0;
  double foreign = 0;
  size_t lost = 0;
};

// used_memory around the first ceiling run and the expiry-ctl run, and the sampled key sizes.
struct BulkMemory {
  long long ceiling_before = 0;
  long long ceiling_after = 0;
  long long ctl_before = 0;
  long long ctl_after = 0;
  KeyMemory keys;
};

// The expiry-ctl schedule --file run.
struct CtlBulkRun {
  double seconds = 0;          // process start to exit
  double foreign = 0;
  long long write_ms = 0;      // its own report of the write phase, or -1
  long long pending_after = 0;
  double rate = 0;
  double write_rate = 0;
  size_t lost = 0;
};

size_t lost_of(size_t n, long long pending) {
  return n - static_cast<size_t>(std::min<long long>(pending, static_cast<long long>(n)));
}

// The ceiling: the bare script pipelined from the bench, once as the issue states it (128 per
// round trip) and once with expiry-ctl's transport (512-command windows, two in flight); the
// faster is the reference. Memory is measured on the first.
std::vector<CeilingRun> run_ceilings(const BenchContext& ctx, SyncConnection& conn, long long base, BulkMemory& memory,
                                     BenchReport& report) {
  const size_t n = ctx.sizes.bulk_tasks;
  auto due_of = [base](size_t i) { return TaskDue{ScheduleMode::At, base + static_cast<long long>(i)}; };
  std::vector<CeilingRun> ceilings = {
      {"ceiling: FCALL expiry_schedule pipelined " + std::to_string(ctx.pipeline_depth) + " deep", ctx.pipeline_depth, 1},
      {"ceiling: FCALL expiry_schedule, windows of 512, two in flight", 512, 2}};
  for (size_t c = 0; c < ceilings.size(); ++c) {
    CeilingRun& run = ceilings[c];
    progress("bulk: " + run.label + ", " + std::to_string(n) + " tasks");
    if (c == 0) memory.ceiling_before = info_integer(conn, "memory", "used_memory");
    const CpuSnapshot cpu0 = cpu_snapshot({ctx.redis_pid});
    run.seconds = schedule_tasks(conn, ctx, "far-", n, run.depth, due_of, run.windows).seconds;
    run.foreign = foreign_cpu_percent(cpu0, cpu_snapshot({ctx.redis_pid}));
    run.rate = static_cast<double>(n) / run.seconds;
    run.lost = lost_of(n, conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer);
    report.check_integrity("bulk/ceiling-" + std::to_string(run.depth) + "x" + std::to_string(run.windows), run.lost, 0);
    if (c == 0) {
      memory.ceiling_after = info_integer(conn, "memory", "used_memory");
      memory.keys = sample_key_memory(ctx, conn, "far-", n);
    }
    conn.checked({"FLUSHALL"});
  }
  return ceilings;
}

CtlBulkRun run_ctl_bulk(const BenchContext& ctx, SyncConnection& conn, long long base, BulkMemory& memory,
                        BenchReport& report) {
  const size_t n = ctx.sizes.bulk_tasks;
  const std::string file = ctx.work_dir + "/bulk.jsonl";
  write_bulk_file(ctx, file, "far-", n, base);
  progress("bulk: expiry-ctl schedule --file, " + std::to_string(n) + " tasks");
  memory.ctl_before = info_integer(conn, "memory", "used_memory");
  const std::string log = ctx.work_dir + "/ctl-bulk.log";
  const CpuSnapshot cpu2 = cpu_snapshot({ctx.redis_pid});
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> ctl_argv{ctx.ctl_bin, "schedule", "--redis-url", ctx.redis_url, "--namespace", ctx.keys.ns(),
                                    "--file",    file};
  ctl_argv.insert(ctl_argv.end(), ctx.tls_flags.begin(), ctx.tls_flags.end());
  ChildProcess ctl(ctl_argv, log);
  const int code = ctl.wait();
  CtlBulkRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.foreign = foreign_cpu_percent(cpu2, cpu_snapshot({ctx.redis_pid}));
  if (code != 0) throw Error("expiry-ctl schedule --file exited " + std::to_string(code) + "; see " + log);
  run.write_ms = ctl_reported_ms(log);
  memory.ctl_after = info_integer(conn, "memory", "used_memory");
  run.pending_after = conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer;
  run.rate = static_cast<double>(n) / run.seconds;
  run.write_rate = run.write_ms > 0 ? static_cast<double>(n) * 1000.0 / static_cast<double>(run.write_ms) : 0;
  run.lost = lost_of(n, run.pending_after);
  report.check_integrity("bulk/expiry-ctl", run.lost, 0);
  return run;
}

double per_task(long long before, long long after, size_t n) {
  return static_cast<double>(after - before) / static_cast<double>(n);
}

void record_bulk_json(nlohmann::json& j, const BenchContext& ctx, const std::vector<CeilingRun>& ceilings,
                      const CeilingRun& best, const CtlBulkRun& ctl, const BulkMemory& memory) {
  const size_t n = ctx.sizes.bulk_tasks;
  j["ceiling"] = {{"system", best.label}, {"depth", best.depth}, {"windows_in_flight", best.windows},
                  {"seconds", best.seconds}, {"tasks_per_s", best.rate}};
  for (const auto& c : ceilings) {
    j["ceilings"].push_back({{"system", c.label}, {"depth", c.depth}, {"windows_in_flight", c.windows},
                             {"seconds", c.seconds}, {"tasks_per_s", c.rate}, {"lost", c.lost},
                             {"foreign_cpu_percent", c.foreign}});
  }
  j["expiry_ctl"] = {{"seconds_end_to_end", ctl.seconds},
                     {"tasks_per_s_end_to_end", ctl.rate},
                     {"write_phase_ms", ctl.write_ms},
                     {"tasks_per_s_write_phase", ctl.write_rate},
                     {"pending_after", ctl.pending_after},
                     {"foreign_cpu_percent", ctl.foreign},
                     {"ratio_to_ceiling", ctl.rate / best.rate}};
  const KeyMemory& keys = memory.keys;
  j["memory"] = {{"payload_bytes", ctx.payload_bytes},
                 {"used_memory_per_task_ceiling_run", per_task(memory.ceiling_before, memory.ceiling_after, n)},
                 {"used_memory_per_task_ctl_run", per_task(memory.ctl_before, memory.ctl_after, n)},
                 {"memory_usage_trigger_string", keys.trigger_bytes},
                 {"memory_usage_shadow_hash", keys.shadow_bytes},
                 {"memory_usage_zset_member", keys.zset_member_bytes},
                 {"shadow_hash_encoding", keys.shadow_encoding},
                 {"hash_max_listpack_value", keys.listpack_value}};
}

Table bulk_rate_table(const BenchContext& ctx, const std::vector<CeilingRun>& ceilings, double ceiling_rate,
                      const CtlBulkRun& ctl) {
  const size_t n = ctx.sizes.bulk_tasks;
  Table t{"(d) bulk schedule: " + std::to_string(n) + " far-future tasks, " + std::to_string(ctx.payload_bytes) +
              "-byte payloads",
          {"producer", "tasks", "seconds", "tasks/s", "% of ceiling", "lost", "other CPU %"},
          {},
          {"% of ceiling: of the faster ceiling row. Other CPU %: processes other than the bench, its Redis and "
           "expiry-ctl, % of all cores."}};
  for (const auto& c : ceilings) {
    t.rows.push_back({c.label, std::to_string(n), fixed(c.seconds, 2), fixed(c.rate), fixed(100 * c.rate / ceiling_rate),
                      std::to_string(c.lost), fixed(c.foreign)});
  }
  t.rows.push_back({"expiry-ctl schedule --file (process start to exit)", std::to_string(n), fixed(ctl.seconds, 2),
                    fixed(ctl.rate), fixed(100 * ctl.rate / ceiling_rate), std::to_string(ctl.lost),
                    fixed(ctl.foreign)});
  if (ctl.write_ms > 0) {
    t.rows.push_back({"expiry-ctl, write phase only (its own report)", std::to_string(n),
                      fixed(static_cast<double>(ctl.write_ms) / 1000.0, 2), fixed(ctl.write_rate),
                      fixed(100 * ctl.write_rate / ceiling_rate), "-", "-"});
  }
  return t;
}

Table bulk_memory_table(const BenchContext& ctx, const BulkMemory& memory) {
  const size_t n = ctx.sizes.bulk_tasks;
  const KeyMemory& keys = memory.keys;
  Table m{"Redis memory per pending task (" + std::to_string(ctx.payload_bytes) + "-byte payload, ids like far-123456)",
          {"measure", "bytes"},
          {},
          {}};
  m.rows.push_back({"used_memory delta / tasks (ceiling run)", fixed(per_task(memory.ceiling_before, memory.ceiling_after, n))});
  m.rows.push_back({"used_memory delta / tasks (expiry-ctl run)", fixed(per_task(memory.ctl_before, memory.ctl_after, n))});
  m.rows.push_back({"MEMORY USAGE trigger string NS:{0}:t:<id> (mean of " + std::to_string(kMemorySamples) + ")",
                    fixed(keys.trigger_bytes)});
  m.rows.push_back({"MEMORY USAGE shadow hash NS:{0}:task:<id> (mean of " + std::to_string(kMemorySamples) + "; " +
                        keys.shadow_encoding + ", hash-max-listpack-value " + keys.listpack_value + ")",
                    fixed(keys.shadow_bytes)});
  m.rows.push_back({"ZSET member: MEMORY USAGE schedule SAMPLES 0 / ZCARD", fixed(keys.zset_member_bytes)});
  m.rows.push_back({"sum of the three", fixed(keys.trigger_bytes + keys.shadow_bytes + keys.zset_member_bytes)});
  return m;
}

}  // namespace

void run_bulk_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  auto& j = report.scenario("bulk");
  j["tasks"] = ctx.sizes.bulk_tasks;
  conn.checked({"FLUSHALL"});
  const long long base = wall_ms() + 86400000LL;  // due in a day: nothing fires during the bench
  BulkMemory memory;
  const auto ceilings = run_ceilings(ctx, conn, base, memory, report);
  const CeilingRun& best = *std::max_element(ceilings.begin(), ceilings.end(),
                                             [](const CeilingRun& a, const CeilingRun& b) { return a.rate < b.rate; });
  const CtlBulkRun ctl = run_ctl_bulk(ctx, conn, base, memory, report);
  record_bulk_json(j, ctx, ceilings, best, ctl, memory);
  report.add_table(bulk_rate_table(ctx, ceilings, best.rate, ctl));
  report.add_table(bulk_memory_table(ctx, memory));
}

void run_cancel_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  const size_t n = ctx.sizes.cancel_tasks;
  auto& j = report.scenario("cancel");
  reset_stream(ctx, conn);
  conn.checked({"DEL", ctx.keys.schedule_key()});
  const long long base = wall_ms() + 86400000LL;
  auto due_of = [base](size_t i) { return TaskDue{ScheduleMode::At, base + static_cast<long long>(i)}; };
  progress("cancel: scheduling 2 x " + std::to_string(n) + " tasks");
  schedule_tasks(conn, ctx, "cu-", n, ctx.pipeline_depth, due_of);
  schedule_tasks(conn, ctx, "cp-", n, ctx.pipeline_depth, due_of);

  Table t{"(e) cancel: FCALL expiry_cancel of " + std::to_string(n) + " pending tasks per mode",
          {"mode", "tasks", "cancels/s", "latency p50 us", "p99 us", "p99.9 us", "max us", "not cancelled",
           "forwarded anyway"},
          {},
          {"Latency of a pipelined cancel: from sending its window of " + std::to_string(ctx.pipeline_depth) +
           " to reading its reply."}};
  auto row = [&](const std::string& mode, size_t depth, const std::string& prefix) {
    progress("cancel: " + mode);
    std::vector<double> latency_us;
    latency_us.reserve(n);
    size_t not_cancelled = 0;
    std::chrono::steady_clock::time_point window_start;
    const double seconds = run_pipelined(
        conn, n, depth,
        [&](size_t i) {
          if (i % depth == 0) window_start = std::chrono::steady_clock::now();
          return cancel_argv(ctx.keys, task_id(prefix, i));
        },
        [&](size_t, const Reply& r) {
          latency_us.push_back(
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - window_start).count());
          if (r.type != Reply::Type::Integer || r.integer != 1) ++not_cancelled;
        });
    const LatenessSummary s = summarize_lateness(latency_us);
    const double rate = static_cast<double>(n) / seconds;
    t.rows.push_back({mode, std::to_string(n), fixed(rate), fixed(s.p50), fixed(s.p99), fixed(s.p999), fixed(s.max),
                      std::to_string(not_cancelled), ""});
    j[mode] = {{"depth", depth}, {"tasks", n},        {"seconds", seconds},      {"cancels_per_s", rate},
               {"p50_us", s.p50}, {"p99_us", s.p99}, {"p999_us", s.p999},       {"max_us", s.max},
               {"not_cancelled", not_cancelled}};
    return not_cancelled;
  };
  const size_t lost_u = row("unpipelined", 1, "cu-");
  const size_t lost_p = row("pipelined " + std::to_string(ctx.pipeline_depth) + " deep", ctx.pipeline_depth, "cp-");
  const long long left = conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer;
  const long long forwarded = conn.checked({"XLEN", ctx.stream}).integer;
  for (auto& r : t.rows) r.back() = std::to_string(forwarded);
  j["pending_after"] = left;
  j["forwarded_after_cancel"] = forwarded;
  report.check_integrity("cancel/unpipelined", lost_u, 0);
  report.check_integrity("cancel/pipelined", lost_p + static_cast<size_t>(left), static_cast<size_t>(forwarded));
  report.add_table(t);
}

}  // namespace expiry::bench
