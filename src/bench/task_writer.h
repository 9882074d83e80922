// Pipelined writes from the bench itself: N commands sent `depth` per round trip, and on top of
// that the bench's ways of scheduling many tasks: FCALL expiry_schedule one task per call (the
// pipelined single-task producer, and the setup of every scenario), FCALL expiry_schedule_many
// (batched), and the bare schedule script (src/lua/bench_bare_schedule.lua, the ceiling).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench/bench_context.h"
#include "functions/function_library.h"
#include "io/sync/sync_connection.h"

namespace expiry::bench {

// Sends make_argv(i) for i in [0, n) in windows of `depth` commands, and passes each reply to
// on_reply(i, reply) in order. With windows_in_flight 2, window k+1 is sent before the replies of
// window k are read, so Redis never waits for this process (expiry-ctl's transport). Returns the
// elapsed seconds.
double run_pipelined(SyncConnection& conn, size_t n, size_t depth,
                     const std::function<std::vector<std::string>(size_t)>& make_argv,
                     const std::function<void(size_t, const Reply&)>& on_reply, int windows_in_flight = 1);

struct TaskDue {
  ScheduleMode mode = ScheduleMode::Delay;
  long long ms = 0;
};

struct ScheduleOutcome {
  double seconds = 0;
  long long min_due_ms = 0;
  long long max_due_ms = 0;
};

// Schedules tasks "<prefix><i>" with ctx.payload_bytes payloads, due as due_of(i) says, in
// windows of `depth` (windows_in_flight as for run_pipelined). Throws Error if Redis rejects any.
ScheduleOutcome schedule_tasks(SyncConnection& conn, const BenchContext& ctx, const std::string& prefix, size_t n,
                               size_t depth, const std::function<TaskDue(size_t)>& due_of, int windows_in_flight = 1);

// As schedule_tasks, with FCALL expiry_schedule_many of `batch` tasks per call, `depth` calls
// per window.
ScheduleOutcome schedule_tasks_batched(SyncConnection& conn, const BenchContext& ctx, const std::string& prefix,
                                       size_t n, size_t batch, size_t depth,
                                       const std::function<TaskDue(size_t)>& due_of, int windows_in_flight = 1);

// Loads expiry_bench_bare_schedule (FUNCTION LOAD REPLACE). Throws Error if Redis refuses.
void load_bare_schedule_script(SyncConnection& conn);

// As schedule_tasks, with FCALL expiry_bench_bare_schedule (load_bare_schedule_script first):
// the same keys and hash fields, none of the library's checks. due_of must say ScheduleMode::At.
ScheduleOutcome bare_schedule_tasks(SyncConnection& conn, const BenchContext& ctx, const std::string& prefix,
                                    size_t n, size_t depth, const std::function<TaskDue(size_t)>& due_of,
                                    int windows_in_flight = 1);

}  // namespace expiry::bench
