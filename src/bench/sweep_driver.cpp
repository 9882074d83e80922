// See sweep_driver.h.
#include "bench/sweep_driver.h"

#include <chrono>

#include "errors.h"
#include "function_library.h"

namespace expiry::bench {

SweepDrive drive_sweeps(SyncConnection& conn, const BenchContext& ctx, int batch, size_t depth,
                        const std::string& via) {
  SweepDrive d;
  const auto argv = sweep_argv(ctx.keys, ctx.stream, batch, via, ctx.group);
  const auto start = std::chrono::steady_clock::now();
  for (bool more = true; more;) {
    for (size_t i = 0; i < depth; ++i) conn.append(argv);
    for (size_t i = 0; i < depth; ++i) {
      const Reply reply = conn.read_reply();
      const auto result = decode_sweep(reply);
      if (!result) throw Error("FCALL expiry_sweep: " + reply.describe());
      ++d.calls;
      d.forwarded += result->forwarded;
      more = result->more_due();
    }
  }
  d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return d;
}

}  // namespace expiry::bench
