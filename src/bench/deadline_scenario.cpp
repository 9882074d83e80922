// The deadline scenario (issue 20's figures): (1) bulk cancel of N pending tasks by id prefix in
// bounded expiry_cancel_range calls, with a 1-ms PING probe beside it and Redis's own duration
// of the slowest call (SLOWLOG); (2) the resume of N held tasks with the relay running; (3) the
// claim cost of the sweep with no lateness limit, a limit no task exceeds and one every task
// exceeds. One bucket (the bench's namespace). Not in the default --only list.
#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <thread>

#include "base/errors.h"
#include "base/integers.h"
#include "bench/redis_pinger.h"
#include "bench/redis_probe.h"
#include "bench/relay_process.h"
#include "bench/run_tally.h"
#include "bench/scenarios.h"
#include "bench/stream_reader.h"
#include "bench/sweep_driver.h"
#include "bench/task_writer.h"

namespace expiry::bench {

namespace {

constexpr int kCancelLimit = 500;                          // members examined per expiry_cancel_range call
constexpr auto kProbePeriod = std::chrono::milliseconds(1);
constexpr auto kIdleProbe = std::chrono::milliseconds(1000);  // the probe at idle, before the cancel
constexpr long long kResumeTimeoutMs = 300000;
constexpr int kSweepBatch = 100;  // tasks per expiry_sweep call, the relay's default
constexpr size_t kSweepDepth = 4;
// Tasks are scheduled due this long after their schedule call, so that their lateness counts (a
// task scheduled overdue has none) and the limit applies.
constexpr long long kDueAfterMs = 1000;
constexpr long long kOverdueMs = 3000;  // claim cost: the drain starts when every task is this late

// Waits until the wall clock passes `at_ms` and Redis has expired every trigger key (PX), so the
// run does not share Redis with active expiry.
void wait_all_due(SyncConnection& conn, long long at_ms) {
  sleep_until_wall_ms(at_ms);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (keyspace_db0(conn).expires > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

long long elapsed_us(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - since).count();
}

std::string config_value(SyncConnection& conn, const std::string& name) {
  const Reply r = conn.checked({"CONFIG", "GET", name});
  if (r.elements.size() != 2) throw Error("CONFIG GET " + name + ": " + r.describe());
  return r.elements[1].str;
}

// Logs every call in SLOWLOG while it lives (slowlog-log-slower-than 0, a long log) and puts the
// previous settings back when it ends.
class SlowlogEverything {
 public:
  explicit SlowlogEverything(SyncConnection& conn)
      : conn_(conn),
        threshold_(config_value(conn, "slowlog-log-slower-than")),
        max_len_(config_value(conn, "slowlog-max-len")) {
    conn_.checked({"CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "1000000"});
    conn_.checked({"SLOWLOG", "RESET"});
  }
  ~SlowlogEverything() {
    try {
      conn_.checked({"CONFIG", "SET", "slowlog-log-slower-than", threshold_, "slowlog-max-len", max_len_});
    } catch (const std::exception&) {
    }
  }
  SlowlogEverything(const SlowlogEverything&) = delete;
  SlowlogEverything& operator=(const SlowlogEverything&) = delete;

  // Durations in µs of the logged calls FCALL <function> (and how many there were).
  std::vector<long long> durations_us(const std::string& function) {
    std::vector<long long> out;
    const Reply log = conn_.checked({"SLOWLOG", "GET", "-1"});
    for (const auto& e : log.elements) {
      if (e.elements.size() < 4 || e.elements[3].elements.size() < 2) continue;
      std::string command = e.elements[3].elements[0].str;
      std::transform(command.begin(), command.end(), command.begin(), ::tolower);
      if (command == "fcall" && e.elements[3].elements[1].str == function) out.push_back(e.elements[2].integer);
    }
    return out;
  }

 private:
  SyncConnection& conn_;
  std::string threshold_;
  std::string max_len_;
};

struct CancelRun {
  std::string label;
  std::string prefix;
  size_t scheduled = 0;
  size_t expected = 0;  // tasks matching the prefix
  long long cancelled = 0;
  long long examined = 0;
  long long calls = 0;
  double seconds = 0;
  long long slowest_call_client_us = 0;  // round trip
  long long slowest_call_redis_us = 0;   // SLOWLOG
  size_t slowlog_entries = 0;
  RedisPinger::Result idle;
  RedisPinger::Result during;
  long long pending_after = 0;
  long long stream_after = 0;
};

// Schedules `n` far-future tasks "acct:<account(i)>:<i>", probes PING at idle, then cancels by
// `prefix` to the end of the cursor with the probe running.
CancelRun run_cancel(const BenchContext& ctx, SyncConnection& conn, const std::string& label, size_t n, int accounts,
                     const std::string& prefix) {
  conn.checked({"FLUSHALL"});
  reset_stream(ctx, conn);
  CancelRun run;
  run.label = label;
  run.prefix = prefix;
  run.scheduled = n;
  const long long base = wall_ms() + 86400000LL;
  progress("deadline: " + label + ": scheduling " + std::to_string(n) + " tasks");
  for (int a = 0; a < accounts; ++a) {
    const size_t share = n / static_cast<size_t>(accounts);
    schedule_tasks(conn, ctx, "acct:" + std::to_string(a) + ":", share, ctx.pipeline_depth,
                   [base, a, accounts](size_t i) {
                     return TaskDue{ScheduleMode::At, base + static_cast<long long>(i) * accounts + a};
                   });
    if (("acct:" + std::to_string(a) + ":").rfind(prefix, 0) == 0) run.expected += share;
  }
  run.scheduled = static_cast<size_t>(conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer);
  {
    RedisPinger idle(ctx.redis, kProbePeriod);
    std::this_thread::sleep_for(kIdleProbe);
    run.idle = idle.finish();
  }
  progress("deadline: " + label + ": cancelling --prefix " + prefix);
  SlowlogEverything slowlog(conn);
  RedisPinger probe(ctx.redis, kProbePeriod);
  const RangeFilter filter{prefix, std::nullopt, std::nullopt};
  std::string cursor;
  const auto start = std::chrono::steady_clock::now();
  do {
    const auto call_start = std::chrono::steady_clock::now();
    const Reply reply = conn.command(cancel_range_argv(ctx.keys, filter, cursor, kCancelLimit));
    run.slowest_call_client_us = std::max(run.slowest_call_client_us, elapsed_us(call_start));
    const auto result = decode_range(reply);
    if (!result) throw Error("FCALL expiry_cancel_range: " + reply.describe());
    ++run.calls;
    run.cancelled += result->acted;
    run.examined += result->examined;
    cursor = result->cursor;
  } while (!cursor.empty());
  run.seconds = static_cast<double>(elapsed_us(start)) / 1e6;
  run.during = probe.finish();
  const auto durations = slowlog.durations_us("expiry_v2_cancel_range");
  run.slowlog_entries = durations.size();
  if (!durations.empty()) run.slowest_call_redis_us = *std::max_element(durations.begin(), durations.end());
  run.pending_after = conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer;
  run.stream_after = conn.checked({"XLEN", ctx.stream}).integer;
  return run;
}

struct ResumeRun {
  size_t tasks = 0;
  long long held_check_ms = 0;    // how long XLEN stayed 0 with the relay running, after its sweep
  long long resume_call_us = 0;   // the FCALL expiry_resume round trip
  long long until_all_ms = 0;     // resume sent -> XLEN == N (polled)
  long long last_fired_ms = 0;    // resume sent -> the last entry's fired_ms (Redis clock)
  long long first_fired_ms = 0;   // resume sent -> the first entry's fired_ms
  RunTally tally;
  size_t out_of_order = 0;        // entries whose due_ms is earlier than the entry before
  std::map<std::string, size_t> via;
  int exit_code = 0;
};

// FCALL expiry_pause (until resumed), N overdue tasks, the relay started and swept once with
// nothing forwarded, then FCALL expiry_resume: time until every task is in the stream.
ResumeRun run_resume(const BenchContext& ctx, SyncConnection& conn, size_t n) {
  conn.checked({"FLUSHALL"});
  reset_stream(ctx, conn);
  ResumeRun run;
  run.tasks = n;
  const auto paused = decode_pause(conn.checked(pause_argv(ctx.keys, 0)));
  if (!paused || paused->value != 0) throw Error("FCALL expiry_pause did not pause until resumed");
  const std::string prefix = "held-";
  progress("deadline: resume: pausing, scheduling " + std::to_string(n) + " tasks due 1 s after each is scheduled");
  const long long last_due = schedule_tasks(conn, ctx, prefix, n, ctx.pipeline_depth, [](size_t) {
                               return TaskDue{ScheduleMode::Delay, kDueAfterMs};
                             }).max_due_ms;
  wait_all_due(conn, last_due + 200);
  StreamReader reader(ctx.redis, ctx.stream);
  // The relay sweeps as it starts: wait until SLOWLOG (logging every call) shows its
  // expiry_sweep, which claims nothing while paused, then check that the stream stays empty.
  std::optional<SlowlogEverything> slowlog;
  slowlog.emplace(conn);
  RelayProcess relay(ctx, RelayRole::Relay, "deadline-resume");
  relay.wait_ready(conn);
  const auto swept_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (slowlog->durations_us("expiry_v2_sweep").empty()) {
    if (std::chrono::steady_clock::now() > swept_deadline) throw Error("deadline: the relay did not sweep in 30 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  slowlog.reset();
  const auto held_start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - held_start < std::chrono::milliseconds(500)) {
    if (conn.checked({"XLEN", ctx.stream}).integer != 0) throw Error("deadline: a held task reached the stream while paused");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  run.held_check_ms = elapsed_us(held_start) / 1000;
  progress("deadline: resume: " + std::to_string(n) + " tasks held for " + std::to_string(run.held_check_ms) +
           " ms with the relay running; resuming");
  const long long resume_ms = wall_ms();
  const auto resume_start = std::chrono::steady_clock::now();
  const auto resumed = decode_pause(conn.checked(resume_argv(ctx.keys, 0)));
  run.resume_call_us = elapsed_us(resume_start);
  if (!resumed || resumed->value != 1) throw Error("FCALL expiry_resume: the namespace was not paused");
  const auto deadline = resume_start + std::chrono::milliseconds(kResumeTimeoutMs);
  while (conn.checked({"XLEN", ctx.stream}).integer < static_cast<long long>(n)) {
    if (std::chrono::steady_clock::now() > deadline) {
      progress("deadline: resume: not every task forwarded in " + std::to_string(kResumeTimeoutMs) + " ms");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  run.until_all_ms = elapsed_us(resume_start) / 1000;
  run.exit_code = relay.stop();
  drain_due_tasks(ctx, conn);
  const auto entries = finish_reader(ctx, conn, reader);
  run.tally = tally_run(entries, prefix, n, resume_ms, static_cast<double>(kResumeTimeoutMs));
  run.first_fired_ms = run.tally.first_fired_ms - resume_ms;
  run.last_fired_ms = run.tally.last_fired_ms - resume_ms;
  long long previous_due = 0;
  for (const auto& e : entries) {
    if (!e.task) continue;
    if (e.task->due_ms < previous_due) ++run.out_of_order;
    previous_due = e.task->due_ms;
  }
  return run;
}

struct ClaimCostRun {
  std::string label;
  long long max_late_ms = 0;
  size_t tasks = 0;
  SweepDrive drive;
  double tasks_per_s = 0;
  double redis_us_per_task = 0;  // INFO commandstats usec of fcall / tasks
  double redis_cpu_us_per_task = 0;  // INFO cpu (user + sys) / tasks
  long long stream_after = 0;
  long long dead_after = 0;
  long long pending_after = 0;
  size_t expected_forwarded = 0;
  size_t expected_dead = 0;
};

long long fcall_usec(SyncConnection& conn) {
  const auto stats = info_fields(conn, "commandstats");
  const auto it = stats.find("cmdstat_fcall");
  if (it == stats.end()) return 0;
  const auto at = it->second.find("usec=");
  if (at == std::string::npos) return 0;
  return parse_int64(it->second.substr(at + 5, it->second.find(',', at) - at - 5)).value_or(0);
}

// N tasks a minute overdue, drained by expiry_sweep calls from the bench with `max_late_ms`.
ClaimCostRun run_claim_cost(const BenchContext& ctx, SyncConnection& conn, const std::string& label, size_t n,
                            long long max_late_ms, bool all_dead) {
  conn.checked({"FLUSHALL"});
  reset_stream(ctx, conn);
  const std::string dead = ctx.stream + ":dead";
  ClaimCostRun run;
  run.label = label;
  run.max_late_ms = max_late_ms;
  run.tasks = n;
  run.expected_forwarded = all_dead ? 0 : n;
  run.expected_dead = all_dead ? n : 0;
  progress("deadline: claim cost, " + label + ": scheduling " + std::to_string(n) + " tasks due 1 s after each is scheduled");
  const long long last_due = schedule_tasks(conn, ctx, "cc-", n, ctx.pipeline_depth, [](size_t) {
                               return TaskDue{ScheduleMode::Delay, kDueAfterMs};
                             }).max_due_ms;
  // Every task at least kOverdueMs late when the drain starts.
  wait_all_due(conn, last_due + kOverdueMs);
  const double cpu0 = redis_cpu_seconds(conn);
  const long long usec0 = fcall_usec(conn);
  run.drive = drive_sweeps(conn, ctx, kSweepBatch, kSweepDepth, "sweep", SweepScript::Library,
                           ClaimLimits{max_late_ms, dead});
  run.redis_us_per_task = static_cast<double>(fcall_usec(conn) - usec0) / static_cast<double>(n);
  run.redis_cpu_us_per_task = (redis_cpu_seconds(conn) - cpu0) * 1e6 / static_cast<double>(n);
  run.tasks_per_s = static_cast<double>(n) / run.drive.seconds;
  run.stream_after = conn.checked({"XLEN", ctx.stream}).integer;
  run.dead_after = conn.checked({"XLEN", dead}).integer;
  run.pending_after = conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer;
  return run;
}

std::string ping_text(const RedisPinger::Result& r) {
  return fixed(r.rtt.p50, 2) + " / " + fixed(r.rtt.p99, 2) + " / " + fixed(r.rtt.max, 2);
}

nlohmann::json ping_json(const RedisPinger::Result& r) {
  return {{"samples", r.rtt.observed}, {"p50_ms", r.rtt.p50}, {"p99_ms", r.rtt.p99}, {"p999_ms", r.rtt.p999},
          {"max_ms", r.rtt.max}, {"over_5ms", r.over_5ms}};
}

void report_cancels(const std::vector<CancelRun>& runs, nlohmann::json& j, BenchReport& report) {
  Table t{"deadline (1): bulk cancel, FCALL expiry_cancel_range --prefix, " + std::to_string(kCancelLimit) +
              " members per call, looped on the cursor",
          {"run", "scheduled", "cancelled", "seconds", "cancels/s", "calls", "slowest call us (Redis / round trip)",
           "PING ms p50/p99/max idle", "PING ms p50/p99/max during", "PINGs > 5 ms"},
          {},
          {"PING probe: its own connection, one PING every 1 ms; idle = the second before the cancel. Slowest call "
           "(Redis): SLOWLOG with slowlog-log-slower-than 0 during the cancel."}};
  for (const auto& r : runs) {
    const double rate = static_cast<double>(r.cancelled) / r.seconds;
    t.rows.push_back({r.label, std::to_string(r.scheduled), std::to_string(r.cancelled), fixed(r.seconds, 3),
                      fixed(rate), std::to_string(r.calls),
                      std::to_string(r.slowest_call_redis_us) + " / " + std::to_string(r.slowest_call_client_us),
                      ping_text(r.idle), ping_text(r.during), std::to_string(r.during.over_5ms)});
    j["cancel"][r.label] = {{"prefix", r.prefix},
                            {"scheduled", r.scheduled},
                            {"matching", r.expected},
                            {"cancelled", r.cancelled},
                            {"examined", r.examined},
                            {"calls", r.calls},
                            {"limit_per_call", kCancelLimit},
                            {"seconds", r.seconds},
                            {"cancels_per_s", rate},
                            {"slowest_call_redis_us", r.slowest_call_redis_us},
                            {"slowest_call_round_trip_us", r.slowest_call_client_us},
                            {"slowlog_cancel_entries", r.slowlog_entries},
                            {"ping_idle", ping_json(r.idle)},
                            {"ping_during", ping_json(r.during)},
                            {"pending_after", r.pending_after},
                            {"stream_after", r.stream_after}};
    const size_t expected = r.expected;
    const size_t cancelled = static_cast<size_t>(r.cancelled);
    // lost: a matching task left pending (or a call that cancelled less); duplicated: more than matched
    report.check_integrity("deadline/cancel-" + r.label, expected > cancelled ? expected - cancelled : 0,
                           cancelled > expected ? cancelled - expected : 0,
                           static_cast<size_t>(r.stream_after) +
                               (r.pending_after != static_cast<long long>(r.scheduled - expected) ? 1 : 0));
  }
  report.add_table(t);
}

void report_resume(const ResumeRun& r, nlohmann::json& j, BenchReport& report) {
  Table t{"deadline (2): resume of " + std::to_string(r.tasks) + " held tasks with the relay running",
          {"tasks", "held ms (relay swept, stream empty)", "resume call us", "resume -> all in stream ms",
           "resume -> first / last fired_ms", "forwarded", "lost", "duplicated", "out of due order", "via"},
          {},
          {"FCALL expiry_pause 0 before scheduling (each task due 1 s after it was scheduled, all due before the relay starts); the relay's startup sweep claims nothing; "
           "FCALL expiry_resume publishes a wake and the relay drains. 'all in stream': XLEN polled every 1 ms."}};
  std::string via;
  for (const auto& [name, count] : r.tally.via) via += (via.empty() ? "" : " ") + name + ":" + std::to_string(count);
  t.rows.push_back({std::to_string(r.tasks), std::to_string(r.held_check_ms), std::to_string(r.resume_call_us),
                    std::to_string(r.until_all_ms),
                    std::to_string(r.first_fired_ms) + " / " + std::to_string(r.last_fired_ms),
                    std::to_string(r.tally.forwarded), std::to_string(r.tally.lost),
                    std::to_string(r.tally.duplicated), std::to_string(r.out_of_order), via});
  j["resume"] = {{"tasks", r.tasks},
                 {"held_check_ms", r.held_check_ms},
                 {"resume_call_us", r.resume_call_us},
                 {"resume_to_all_in_stream_ms", r.until_all_ms},
                 {"resume_to_first_fired_ms", r.first_fired_ms},
                 {"resume_to_last_fired_ms", r.last_fired_ms},
                 {"tasks_per_s", static_cast<double>(r.tasks) * 1000.0 / static_cast<double>(std::max(1LL, r.until_all_ms))},
                 {"out_of_due_order", r.out_of_order},
                 {"relay_exit_code", r.exit_code},
                 {"tally", tally_json(r.tally)}};
  report.check_integrity("deadline/resume", r.tally.lost, r.tally.duplicated, r.tally.foreign + r.out_of_order);
  report.add_table(t);
}

void report_claim_costs(const std::vector<ClaimCostRun>& runs, nlohmann::json& j, BenchReport& report) {
  Table t{"deadline (3): claim cost with and without a lateness limit (expiry_sweep " + std::to_string(kSweepBatch) +
              " per call, " + std::to_string(kSweepDepth) + " calls per round trip, no relay)",
          {"limit", "max_late_ms", "tasks", "seconds", "tasks/s", "Redis us/task (commandstats / CPU)", "calls", "forwarded",
           "dead-lettered", "left"},
          {},
          {"Each task due 1 s after it was scheduled; the drain starts when all are at least 3 s late. Redis us/task: "
           "INFO commandstats fcall usec over the drain / tasks, and Redis's CPU (user + sys) / tasks."}};
  const double base_rate = runs.empty() ? 0 : runs.front().tasks_per_s;
  for (const auto& r : runs) {
    t.rows.push_back({r.label, std::to_string(r.max_late_ms), std::to_string(r.tasks), fixed(r.drive.seconds, 3),
                      fixed(r.tasks_per_s), fixed(r.redis_us_per_task, 2) + " / " + fixed(r.redis_cpu_us_per_task, 2),
                      std::to_string(r.drive.calls),
                      std::to_string(r.stream_after), std::to_string(r.dead_after), std::to_string(r.pending_after)});
    j["claim_cost"][r.label] = {{"max_late_ms", r.max_late_ms},
                                {"tasks", r.tasks},
                                {"seconds", r.drive.seconds},
                                {"tasks_per_s", r.tasks_per_s},
                                {"ratio_to_no_limit", base_rate > 0 ? r.tasks_per_s / base_rate : 0},
                                {"redis_us_per_task", r.redis_us_per_task},
                                {"redis_cpu_us_per_task", r.redis_cpu_us_per_task},
                                {"calls", r.drive.calls},
                                {"forwarded", r.stream_after},
                                {"dead_lettered", r.dead_after},
                                {"sweep_reported_forwarded", r.drive.forwarded},
                                {"sweep_reported_late", r.drive.late},
                                {"pending_after", r.pending_after}};
    const long long placed = r.stream_after + r.dead_after;
    const long long n = static_cast<long long>(r.tasks);
    const bool right_place = r.stream_after == static_cast<long long>(r.expected_forwarded) &&
                             r.dead_after == static_cast<long long>(r.expected_dead);
    report.check_integrity("deadline/claim-" + r.label, static_cast<size_t>(std::max(0LL, n - placed)),
                           static_cast<size_t>(std::max(0LL, placed - n)), right_place ? 0 : 1);
  }
  report.add_table(t);
}

}  // namespace

void run_deadline_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  const size_t n = ctx.sizes.deadline_tasks;
  auto& j = report.scenario("deadline");
  j["tasks"] = n;
  std::vector<CancelRun> cancels;
  cancels.push_back(run_cancel(ctx, conn, "all", n, 1, "acct:0:"));
  cancels.push_back(run_cancel(ctx, conn, "half", n, 2, "acct:0:"));
  report_cancels(cancels, j, report);
  report_resume(run_resume(ctx, conn, n), j, report);
  std::vector<ClaimCostRun> costs;
  costs.push_back(run_claim_cost(ctx, conn, "none", n, 0, false));
  costs.push_back(run_claim_cost(ctx, conn, "not exceeded", n, 3600000, false));
  costs.push_back(run_claim_cost(ctx, conn, "exceeded by all", n, 1000, true));
  report_claim_costs(costs, j, report);
  conn.checked({"FLUSHALL"});
}

}  // namespace expiry::bench
