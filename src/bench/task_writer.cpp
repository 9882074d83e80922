// See task_writer.h.
#include "bench/task_writer.h"

#include <algorithm>
#include <chrono>

#include "base/errors.h"
#include "functions/schedule_batch.h"
#include "generated/bench_bare_schedule_lua.h"  // generated: kBenchBareScheduleLuaSource
#include "io/sync/pipeline.h"

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
        return schedule_argv(ctx.keys, id, due.mode, due.ms, task_payload(id, ctx.payload_bytes), {}, ctx.redis.db);
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

ScheduleOutcome schedule_tasks_batched(SyncConnection& conn, const BenchContext& ctx, const std::string& prefix,
                                       size_t n, size_t batch, size_t depth,
                                       const std::function<TaskDue(size_t)>& due_of, int windows_in_flight) {
  ScheduleOutcome out;
  out.min_due_ms = -1;
  std::string first_error;
  const size_t calls = (n + batch - 1) / batch;
  out.seconds = run_pipelined(
      conn, calls, depth,
      [&](size_t c) {
        std::vector<std::string> ids, payloads;
        std::vector<ScheduleBatchTask> tasks;
        const size_t end = std::min(n, (c + 1) * batch);
        for (size_t i = c * batch; i < end; ++i) ids.push_back(task_id(prefix, i));
        for (const auto& id : ids) payloads.push_back(task_payload(id, ctx.payload_bytes));
        for (size_t k = 0; k < ids.size(); ++k) {
          const TaskDue due = due_of(c * batch + k);
          tasks.push_back({ids[k], due.mode, due.ms, payloads[k], {}});
        }
        return schedule_many_argv(ctx.keys, tasks, ctx.redis.db);
      },
      [&](size_t c, const Reply& reply) {
        const size_t tasks = std::min(n, (c + 1) * batch) - c * batch;
        const auto results = decode_schedule_many(reply, tasks);
        if (!results) {
          if (first_error.empty()) first_error = "call " + std::to_string(c) + ": " + reply.describe();
          return;
        }
        for (const auto& r : *results) {
          out.max_due_ms = std::max(out.max_due_ms, r.due_ms);
          if (out.min_due_ms < 0 || r.due_ms < out.min_due_ms) out.min_due_ms = r.due_ms;
        }
      },
      windows_in_flight);
  if (!first_error.empty()) throw Error("FCALL expiry_schedule_many rejected " + first_error);
  return out;
}

void load_bare_schedule_script(SyncConnection& conn) {
  conn.checked({"FUNCTION", "LOAD", "REPLACE", kBenchBareScheduleLuaSource});
}

ScheduleOutcome bare_schedule_tasks(SyncConnection& conn, const BenchContext& ctx, const std::string& prefix,
                                    size_t n, size_t depth, const std::function<TaskDue(size_t)>& due_of,
                                    int windows_in_flight) {
  ScheduleOutcome out;
  std::string first_error;
  out.seconds = run_pipelined(
      conn, n, depth,
      [&](size_t i) {
        const std::string id = task_id(prefix, i);
        const long long now = wall_ms();
        const long long due = due_of(i).ms;
        return std::vector<std::string>{"FCALL", "expiry_bench_bare_schedule", "3", ctx.keys.schedule_key(),
                                        ctx.keys.trigger_key(id), ctx.keys.shadow_key(id), id, std::to_string(due),
                                        std::to_string(std::max(0LL, due - now) + 100), std::to_string(now),
                                        task_payload(id, ctx.payload_bytes)};
      },
      [&](size_t i, const Reply& reply) {
        if (reply.type != Reply::Type::Integer && first_error.empty()) {
          first_error = task_id(prefix, i) + ": " + reply.describe();
        }
      },
      windows_in_flight);
  if (!first_error.empty()) throw Error("FCALL expiry_bench_bare_schedule rejected " + first_error);
  return out;
}

}  // namespace expiry::bench
