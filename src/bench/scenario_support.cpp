// See scenarios.h: the helpers every scenario shares.
#include <iostream>

#include "bench/bench_context.h"
#include "bench/scenarios.h"
#include "bench/sweep_driver.h"
#include "bench/task_writer.h"

namespace expiry::bench {

void reset_stream(const BenchContext& ctx, SyncConnection& conn) {
  conn.checked({"DEL", ctx.stream});
  conn.checked({"XGROUP", "CREATE", ctx.stream, ctx.group, "0", "MKSTREAM"});
}

long long drain_due_tasks(const BenchContext& ctx, SyncConnection& conn) {
  return drive_sweeps(conn, ctx, 1000, 1, kDrainVia).forwarded;
}

std::vector<ReceivedEntry> finish_reader(const BenchContext& ctx, SyncConnection& conn, StreamReader& reader) {
  const long long length = conn.checked({"XLEN", ctx.stream}).integer;
  if (!reader.wait_for(static_cast<size_t>(length), 60000)) {
    progress("reader: " + std::to_string(reader.count()) + " of " + std::to_string(length) + " entries after 60 s");
  }
  return reader.finish();
}

void ensure_backdrop(const BenchContext& ctx, SyncConnection& conn, size_t n) {
  const long long have = conn.checked({"ZCARD", ctx.keys.schedule_key()}).integer;
  if (have >= static_cast<long long>(n)) return;
  progress("backdrop: scheduling " + std::to_string(n) + " far-future tasks");
  const long long base = wall_ms() + 86400000LL;
  schedule_tasks(conn, ctx, "far-", n, ctx.pipeline_depth,
                 [base](size_t i) { return TaskDue{ScheduleMode::At, base + static_cast<long long>(i)}; });
}

void progress(const std::string& line) { std::cerr << "[" << wall_ms() % 1000000 << "] " << line << std::endl; }

}  // namespace expiry::bench
