// See sweep_driver.h.
#include "bench/sweep_driver.h"

#include <chrono>
#include <optional>

#include "base/errors.h"
#include "functions/function_library.h"
#include "generated/bench_bare_lua.h"

namespace expiry::bench {

void load_bare_script(SyncConnection& conn) { conn.checked({"FUNCTION", "LOAD", "REPLACE", kBenchBareLuaSource}); }

namespace {

struct SweepReply {
  long long forwarded = 0;
  long long late = 0;
  bool more_due = false;
};

// What one reply of `script` says, or nullopt for an error or another shape.
std::optional<SweepReply> decode(SweepScript script, const Reply& reply) {
  if (script == SweepScript::Library) {
    const auto result = decode_sweep(reply);
    if (!result) return std::nullopt;
    return SweepReply{result->forwarded, result->late, result->more_due()};
  }
  if (reply.type != Reply::Type::Array || reply.elements.size() != 2 ||
      reply.elements[0].type != Reply::Type::Integer || reply.elements[1].type != Reply::Type::Integer) {
    return std::nullopt;
  }
  return SweepReply{reply.elements[0].integer, 0, reply.elements[1].integer == 1};
}

}  // namespace

SweepDrive drive_sweeps(SyncConnection& conn, const BenchContext& ctx, int batch, size_t depth,
                        const std::string& via, SweepScript script, const ClaimLimits& limits) {
  SweepDrive d;
  const auto argv = script == SweepScript::Library
                        ? sweep_argv(ctx.keys, ctx.stream, batch, via, ctx.group, limits)
                        : std::vector<std::string>{"FCALL", "expiry_bench_bare_sweep", "2", ctx.keys.schedule_key(),
                                                   ctx.stream, std::to_string(batch), via};
  const auto start = std::chrono::steady_clock::now();
  for (bool more = true; more;) {
    for (size_t i = 0; i < depth; ++i) conn.append(argv);
    for (size_t i = 0; i < depth; ++i) {
      const Reply reply = conn.read_reply();
      const auto result = decode(script, reply);
      if (!result) throw Error("FCALL " + argv[1] + ": " + reply.describe());
      ++d.calls;
      d.forwarded += result->forwarded;
      d.late += result->late;
      more = result->more_due;
    }
  }
  d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return d;
}

}  // namespace expiry::bench
