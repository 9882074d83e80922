// See task_writer.h.
#include "bench/task_writer.h"

#include <algorithm>
#include <chrono>

#include "protocol/errors.h"

namespace expiry::bench {

double run_pipelined(SyncConnection& conn, size_t n, size_t depth,
                     const std::function<std::vector<std::string>(size_t)>& make_argv,
                     const std::function<void(size_t, const Reply&)>& on_reply, int windows_in_flight) {
  const auto start = std::chrono::steady_clock::now();
  depth = std::max<size_t>(depth, 1);
  const size_t ahead = windows_in_flight > 1 ? depth : 0;  // commands sent beyond the window being read
  size_t sent = 0;
  auto send_until = [&](size_t end) {
    end = std::min(n, end);
    if (sent >= end) return;
    for (; sent < end; ++sent) conn.append(make_argv(sent));
    conn.flush();
  };
  for (size_t base = 0; base < n; base += depth) {
    const size_t end = std::min(n, base + depth);
    send_until(end + ahead);
    for (size_t i = base; i < end; ++i) on_reply(i, conn.read_reply());
  }
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
