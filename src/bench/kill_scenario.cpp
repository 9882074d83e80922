// (f) kill: tasks come due evenly over kill_seconds; half-way the relay is killed with SIGKILL
// and a new one started at once, as an orchestrator would. Every task must still reach the
// stream exactly once; the figure is how late the tasks due around the kill were. The same
// scenario runs against BullMQ's worker (src/bench/bullmq/), whose stalled-job check brings the
// killed worker's jobs back.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "bench/redis_probe.h"
#include "bench/relay_process.h"
#include "bench/run_tally.h"
#include "bench/scenarios.h"
#include "bench/stream_reader.h"
#include "bench/task_writer.h"

namespace expiry::bench {

void run_kill_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report) {
  const size_t n = ctx.sizes.kill_tasks;
  const long long spread_ms = ctx.sizes.kill_seconds * 1000LL;
  const std::string prefix = "kill-relay-";
  progress("kill: " + std::to_string(n) + " tasks due over " + std::to_string(ctx.sizes.kill_seconds) +
           " s; kill -9 of the relay half-way, a new one started at once");
  reset_stream(ctx, conn);
  auto relay = std::make_unique<RelayProcess>(ctx, RelayRole::Relay, "kill-a");
  relay->wait_ready(conn);
  StreamReader reader(ctx.redis, ctx.stream);
  const long long first_due = redis_time_us(conn) / 1000 + 1000;
  schedule_tasks(conn, ctx, prefix, n, ctx.pipeline_depth, [&](size_t i) {
    return TaskDue{ScheduleMode::At, first_due + static_cast<long long>(i) * spread_ms / static_cast<long long>(n)};
  });

  sleep_until_wall_ms(first_due + spread_ms / 2);
  const size_t seen_before_kill = reader.count();
  ::kill(relay->pid(), SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  relay->stop();  // reaps it
  auto restarted = std::make_unique<RelayProcess>(ctx, RelayRole::Relay, "kill-b");
  const long long restart_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - killed_at).count();
  const long long deadline_ms = first_due + spread_ms + 75000;  // BullMQ's side waits as long
  if (!reader.wait_for(n, std::max(1LL, deadline_ms - wall_ms()))) {
    progress("kill: the restarted relay did not forward everything");
  }
  const int code = restarted->stop();
  drain_due_tasks(ctx, conn);
  const RunTally tally = tally_run(finish_reader(ctx, conn, reader), prefix, n, 0, 75000.0);
  report.check_integrity("kill/relay", tally.lost, tally.duplicated, tally.foreign);

  size_t late_over_1s = 0;
  for (double ms : tally.fired_ms_values) late_over_1s += ms > 1000 ? 1 : 0;
  auto& j = report.scenario("kill");
  j = {{"tasks", n},
       {"seconds", ctx.sizes.kill_seconds},
       {"seen_before_kill", seen_before_kill},
       {"restart_ms", restart_ms},
       {"lost", tally.lost},
       {"duplicated", tally.duplicated},
       {"drained_by_bench", tally.drained},
       {"late_over_1s", late_over_1s},
       {"lateness", tally.fired.to_json()},
       {"exit_code", code}};
  Table t{"(f) kill: " + std::to_string(n) + " tasks due over " + std::to_string(ctx.sizes.kill_seconds) +
              " s, the relay killed -9 half-way and restarted",
          {"system", "tasks", "seen before the kill", "restart ms", "lost", "dup", "late > 1 s", "p50 ms", "p99 ms",
           "max ms"},
          {},
          {"The restarted relay's startup sweep forwards what came due while none ran; lateness = fired_ms - due_ms."}};
  t.rows.push_back({"relay", std::to_string(n), std::to_string(seen_before_kill), std::to_string(restart_ms),
                    std::to_string(tally.lost), std::to_string(tally.duplicated), std::to_string(late_over_1s),
                    tally.fired.format(tally.fired.p50), tally.fired.format(tally.fired.p99),
                    tally.fired.format(tally.fired.max)});
  report.add_table(t);
}

}  // namespace expiry::bench
