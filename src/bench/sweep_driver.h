// The forwarding ceilings: claim calls driven from the bench as fast as one connection allows,
// `depth` calls per round trip, with no listener logic. Two scripts: the relay's own
// expiry_sweep, and expiry_bench_bare_sweep (src/lua/bench_bare.lua), the same writes with none
// of the checks. Also how the bench forwards what a baseline left behind after its deadline
// (via = bench-drain).
#pragma once

#include <string>

#include "bench/bench_context.h"
#include "functions/function_library.h"
#include "io/sync/sync_connection.h"

namespace expiry::bench {

struct SweepDrive {
  double seconds = 0;
  long long calls = 0;
  long long forwarded = 0;
  long long late = 0;  // dead-lettered for lateness (Library only)
};

enum class SweepScript { Library, Bare };

// Loads expiry_bench_bare (FUNCTION LOAD REPLACE). Throws Error if Redis refuses.
void load_bare_script(SyncConnection& conn);

// Sweeps with `script` until a reply says no task is due any more. Throws Error on an error reply.
// `limits` (the lateness limit and its dead stream) apply to the Library script only.
SweepDrive drive_sweeps(SyncConnection& conn, const BenchContext& ctx, int batch, size_t depth,
                        const std::string& via, SweepScript script = SweepScript::Library,
                        const ClaimLimits& limits = {});

}  // namespace expiry::bench
