// The producer-side scenarios: (d) bulk scheduling with expiry-ctl against the bare schedule
// script (the ceiling), the library one task per call (the pipelined single-task producer) and
// expiry_schedule_many from the bench, with Redis memory per pending task, and (e) cancel
// throughput and latency.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>

#include "base/errors.h"
#include "base/integers.h"
#include "bench/lateness_stats.h"
#include "bench/machine_load.h"
#include "bench/redis_probe.h"
#include "bench/scenarios.h"
#include "bench/task_writer.h"
#include "harness/child_process.h"

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

// How a run of the bench itself writes the tasks.
enum class Writer {
  Bare,     // FCALL expiry_bench_bare_schedule, one task per call: the ceiling
  Single,   // FCALL expiry_schedule, one task per call: the pipelined single-task producer
  Batched,  // FCALL expiry_schedule_many, `batch` tasks per call
};

// One run of the bench writing the bulk tasks itself, pipelined.
struct CeilingRun {
  std::string label;
  size_t depth;       // commands per window
  int windows;        // windows in flight
  Writer writer = Writer::Single;
  size_t batch = 1;   // tasks per call
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

// The integrity check's name of a run: bulk/ceiling-<depth>x<windows> for the single-task
// producer (its name before the bare ceiling existed), bulk/bare-..., bulk/batched-<batch>-....
std::string run_key(const CeilingRun& run) {
  const std::string shape = std::to_string(run.depth) + "x" + std::to_string(run.windows);
  switch (run.writer) {
    case Writer::Bare: return "bulk/bare-" + shape;
    case Writer::Single: return "bulk/ceiling-" + shape;
    case Writer::Batched: return "bulk/batched-" + std::to_string(run.batch) + "-" + shape;
  }
  return "bulk/" + shape;
}

// The bench's own runs: the library's expiry_schedule one task per call (as the issue states
// it, 128 per round trip, and with expiry-ctl's old transport, 512-command windows two in
// flight), the bare schedule script the same two ways (the faster is the ceiling), and
// expiry_schedule_many at several batch sizes up to its limit (about 1000 tasks per window,
// two in flight).
// Memory is measured on the first.
std::vector<CeilingRun> run_ceilings(const BenchContext& ctx, SyncConnection& conn, long long base, BulkMemory& memory,
                                     BenchReport& report) {
  const size_t n = ctx.sizes.bulk_tasks;
  auto due_of = [base](size_t i) { return TaskDue{ScheduleMode::At, base + static_cast<long long>(i)}; };
  const std::string deep = std::to_string(ctx.pipeline_depth) + " deep";
  std::vector<CeilingRun> runs = {
      {"single-task producer: FCALL expiry_schedule pipelined " + deep, ctx.pipeline_depth, 1, Writer::Single, 1},
      {"single-task producer: FCALL expiry_schedule, windows of 512, two in flight", 512, 2, Writer::Single, 1},
      {"bare ceiling: ZADD + HSET + SET PX script pipelined " + deep, ctx.pipeline_depth, 1, Writer::Bare, 1},
      {"bare ceiling: ZADD + HSET + SET PX script, windows of 512, two in flight", 512, 2, Writer::Bare, 1}};
  for (size_t batch : {50, 100, 200, 250}) {
    const size_t depth = std::max<size_t>(1, 1000 / batch);
    runs.push_back({"batched: FCALL expiry_schedule_many, " + std::to_string(batch) + " tasks per call, " +
                        std::to_string(depth) + " calls per window, two in flight",
                    depth, 2, Writer::Batched, batch});
  }
  load_bare_schedule_script(conn);
  for (size_t c = 0; c < runs.size(); ++c) {
    CeilingRun& run = runs[c];
    progress("bulk: " + run.label + ", " + std::to_string(n) + " tasks");
    if (c == 0) memory.ceiling_before = info_integer(conn, "memory", "used_memory");
    const CpuSnapshot cpu0 = cpu_snapshot({ctx.redis_pid});
    switch (run.writer) {
      case Writer::Bare: run.seconds = bare_schedule_tasks(conn, ctx, "far-", n, run.depth, due_of, run.windows).seconds; break;
      case Writer::Single: run.seconds = schedule_tasks(conn, ctx, "far-", n, run.depth, due_of, run.windows).seconds; break;
      case Writer::Batched:
        run.seconds = schedule_tasks_batched(conn, ctx, "far-", n, run.batch, run.depth, due_of, run.windows).seconds;
        break;
    }
    run.foreign = foreign_cpu_percent(cpu0, cpu_snapshot({ctx.redis_pid}));
    run.rate = static_cast<double>(n) / run.seconds;
    run.lost = lost_of(n, conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer);
    report.check_integrity(run_key(run), run.lost, 0);
    if (c == 0) {
      memory.ceiling_after = info_integer(conn, "memory", "used_memory");
      memory.keys = sample_key_memory(ctx, conn, "far-", n);
    }
    conn.checked({"FLUSHALL"});
  }
  return runs;
}

// The fastest of `runs` written by `writer`.
const CeilingRun& best_of(const std::vector<CeilingRun>& runs, Writer writer) {
  const CeilingRun* best = nullptr;
  for (const auto& r : runs) {
    if (r.writer == writer && (best == nullptr || r.rate > best->rate)) best = &r;
  }
  if (best == nullptr) throw Error("bulk: no run of the bench's own writer");
  return *best;
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

nlohmann::json run_json(const CeilingRun& c) {
  return {{"system", c.label}, {"depth", c.depth}, {"windows_in_flight", c.windows}, {"tasks_per_call", c.batch},
          {"seconds", c.seconds}, {"tasks_per_s", c.rate}, {"lost", c.lost}, {"foreign_cpu_percent", c.foreign}};
}

// "ceiling" and "ceilings" keep their meaning from before the bare ceiling: the library's
// expiry_schedule pipelined from the bench (now also "single_task_producer").
void record_bulk_json(nlohmann::json& j, const BenchContext& ctx, const std::vector<CeilingRun>& runs,
                      const CtlBulkRun& ctl, const BulkMemory& memory) {
  const size_t n = ctx.sizes.bulk_tasks;
  const CeilingRun& single = best_of(runs, Writer::Single);
  const CeilingRun& bare = best_of(runs, Writer::Bare);
  const CeilingRun& batched = best_of(runs, Writer::Batched);
  j["ceiling"] = {{"system", single.label}, {"depth", single.depth}, {"windows_in_flight", single.windows},
                  {"seconds", single.seconds}, {"tasks_per_s", single.rate}};
  j["single_task_producer"] = run_json(single);
  j["bare_ceiling"] = run_json(bare);
  j["best_batched"] = run_json(batched);
  for (const auto& c : runs) {
    const char* list = c.writer == Writer::Single ? "ceilings" : c.writer == Writer::Bare ? "bare_ceilings" : "batched";
    j[list].push_back(run_json(c));
  }
  j["expiry_ctl"] = {{"seconds_end_to_end", ctl.seconds},
                     {"tasks_per_s_end_to_end", ctl.rate},
                     {"write_phase_ms", ctl.write_ms},
                     {"tasks_per_s_write_phase", ctl.write_rate},
                     {"pending_after", ctl.pending_after},
                     {"foreign_cpu_percent", ctl.foreign},
                     {"ratio_to_ceiling", ctl.rate / single.rate},
                     {"ratio_to_bare_ceiling", ctl.rate / bare.rate},
                     {"write_phase_ratio_to_bare_ceiling", ctl.write_rate / bare.rate}};
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

Table bulk_rate_table(const BenchContext& ctx, const std::vector<CeilingRun>& runs, const CtlBulkRun& ctl) {
  const size_t n = ctx.sizes.bulk_tasks;
  const double ceiling_rate = best_of(runs, Writer::Bare).rate;
  Table t{"(d) bulk schedule: " + std::to_string(n) + " far-future tasks, " + std::to_string(ctx.payload_bytes) +
              "-byte payloads",
          {"producer", "tasks", "seconds", "tasks/s", "% of ceiling", "lost", "other CPU %"},
          {},
          {"% of ceiling: of the faster bare ceiling row (a minimal ZADD + HSET + SET PX script, one task per call, "
           "none of the library's checks). Single-task producer: what a producer that schedules one task per "
           "FCALL gets, pipelined. Other CPU %: processes other than the bench, its Redis and expiry-ctl, % of all "
           "cores."}};
  for (Writer w : {Writer::Bare, Writer::Single, Writer::Batched}) {
    for (const auto& c : runs) {
      if (c.writer != w) continue;
      t.rows.push_back({c.label, std::to_string(n), fixed(c.seconds, 2), fixed(c.rate),
                        fixed(100 * c.rate / ceiling_rate), std::to_string(c.lost), fixed(c.foreign)});
    }
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
  const auto runs = run_ceilings(ctx, conn, base, memory, report);
  const CtlBulkRun ctl = run_ctl_bulk(ctx, conn, base, memory, report);
  record_bulk_json(j, ctx, runs, ctl, memory);
  report.add_table(bulk_rate_table(ctx, runs, ctl));
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
