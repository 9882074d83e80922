// The forwarding ceiling: the bare FCALL expiry_sweep driven from the bench as fast as one
// connection allows, `depth` calls per round trip, with no listener logic. Also how the bench
// forwards what a baseline left behind after its deadline (via = bench-drain).
#pragma once

#include <string>

#include "bench/bench_context.h"
#include "ctl/sync_connection.h"

namespace expiry::bench {

struct SweepDrive {
  double seconds = 0;
  long long calls = 0;
  long long forwarded = 0;
};

// Sweeps until a reply says no task is due any more. Throws Error on an error reply.
SweepDrive drive_sweeps(SyncConnection& conn, const BenchContext& ctx, int batch, size_t depth,
                        const std::string& via);

}  // namespace expiry::bench
