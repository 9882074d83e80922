// See task_writer.h.
#include "bench/task_writer.h"

#include <algorithm>
#include <chrono>

#include "io/sync/pipeline.h"
#include "protocol/errors.h"

namespace expiry::bench {

double run_pipelined(SyncConnection& conn, size_t n, size_t depth,
                     const std::function<std::vector<std::string>(size_t)>& make_argv,
                     const std::function<void(size_t, const Reply&)>& on_reply, int windows_in_flight) {
  const auto start = std::chrono::steady_clock::now();
  PipelineOptions options;
  options.window = depth;
  options.windows_in_flight = windows_in_flight > 1 ? 2 : 1;
  size_t next = 0;
  PipelineSteps steps;
  steps.next_command = [&](std::vector<std::string>& argv) {
    if (next >= n) return false;
    argv = make_argv(next++);
    return true;
  };
  steps.on_reply = on_reply;
  run_pipeline(conn, options, steps);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ScheduleOutcome schedule_tasks(SyncConnection& conn, const BenchContext& ctx, const std::string& prefix, size_t n,
                               size_t depth, const std::function<TaskDue(size_t)>& due_of, int windows_in_flight) {
  ScheduleOutcome out;
  out.min_due_ms = -1;
  std::string first_error;
  out.seconds = run_pipelined(
      conn, n, depth,
      [&](size_t i) {
        const std::string id = task_id(prefix, i);
        const TaskDue due = due_of(i);
        return schedule_argv(ctx.keys, id, due.mode, due.ms, task_payload(id, ctx.payload_bytes));
      },
      [&](size_t i, const Reply& reply) {
        const auto result = decode_schedule(reply);
        if (!result) {
          if (first_error.empty()) first_error = task_id(prefix, i) + ": " + reply.describe();
          return;
        }
        out.max_due_ms = std::max(out.max_due_ms, result->due_ms);
        if (out.min_due_ms < 0 || result->due_ms < out.min_due_ms) out.min_due_ms = result->due_ms;
      },
      windows_in_flight);
  if (!first_error.empty()) throw Error("FCALL expiry_schedule rejected " + first_error);
  return out;
}

}  // namespace expiry::bench
