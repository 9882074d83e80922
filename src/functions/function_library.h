// The expiry_v1 Redis Function library (src/lua/expiry/, one source made of its parts): its
// source, the FCALL argument lists of each operation, and their reply decoding. Operations call
// the library's v2 functions (expiry_v2_*, one reply shape each; docs/protocol.md, "Versions").
// Pure, no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "functions/key_layout.h"
#include "functions/task_options.h"
#include "functions/task_values.h"
#include "redis/reply.h"

namespace expiry {

constexpr const char* kLibraryName = "expiry_v1";

// The Lua source, embedded at build time.
const std::string& function_library_source();
// FUNCTION LOAD REPLACE <source>.
std::vector<std::string> load_library_argv();
// The reply says the library is not loaded (after FUNCTION FLUSH or a restart without it).
bool is_function_missing(const Reply& reply);

// `db`, the database the caller selected (0 on a cluster), is named in the wake message the
// call may publish, so that relays serving other databases ignore it (wake_message.h); nullopt
// sends the form without it. `options` is task_options_argument's (functions/task_options.h).
std::vector<std::string> schedule_argv(const KeyLayout& keys, std::string_view id, ScheduleMode mode,
                                       long long ms, std::string_view payload, std::string_view stream = {},
                                       std::optional<int> db = std::nullopt, std::string_view options = {});
std::vector<std::string> reschedule_argv(const KeyLayout& keys, std::string_view id, ScheduleMode mode, long long ms,
                                         std::optional<int> db = std::nullopt);
std::vector<std::string> cancel_argv(const KeyLayout& keys, std::string_view id);

// What a claim or sweep does with late tasks: tasks without a limit of their own that are more
// than max_late_ms late (0: no limit) are dead-lettered, as are tasks later than their own
// limit; into dead_stream for the default stream (empty: the library's default, STREAM:dead,
// or NS:{B}:dead for a bucket stream). Claims and sweeps always send max_late_ms.
struct ClaimLimits {
  long long max_late_ms = 0;
  std::string dead_stream;
};
std::vector<std::string> claim_argv(const KeyLayout& keys, std::string_view id, std::string_view via,
                                    std::string_view stream, std::string_view group,
                                    const ClaimLimits& limits = {});
std::vector<std::string> sweep_argv(const KeyLayout& keys, std::string_view stream, int limit,
                                    std::string_view via, std::string_view group,
                                    const ClaimLimits& limits = {});

// Bulk operations over one bucket (RangeFilter: functions/task_values.h), each call bounded
// (walk_range in src/lua/expiry/ranges.lua): continue with the returned cursor until it is empty.
std::vector<std::string> cancel_range_argv(const KeyLayout& keys, const RangeFilter& filter, std::string_view cursor,
                                           int limit);
// after_ms is not sent: only tasks not yet due are promoted.
std::vector<std::string> run_now_range_argv(const KeyLayout& keys, const RangeFilter& filter, std::string_view cursor,
                                            int limit, std::optional<int> db = std::nullopt);
std::vector<std::string> run_now_argv(const KeyLayout& keys, std::string_view id, std::optional<int> db = std::nullopt);
// for_ms 0: until resumed.
std::vector<std::string> pause_argv(const KeyLayout& keys, long long for_ms);
std::vector<std::string> resume_argv(const KeyLayout& keys, std::optional<int> db = std::nullopt);

struct ClaimResult {
  enum class Outcome { Forwarded, NotPending, NotDue, DeadLettered, Paused } outcome = Outcome::NotPending;
  std::string entry_id;      // Forwarded; DeadLettered: the dead letter's id
  long long lateness_ms = 0; // Forwarded, DeadLettered: fired - due
  long long due_ms = 0;      // NotDue
  long long paused_until_ms = 0;  // Paused: the end of the pause, 0 until resumed
};
struct SweepResult {
  long long forwarded = 0;
  long long next_due_ms = -1;  // -1: schedule empty
  long long now_us = 0;        // Redis clock when the sweep ended, microseconds
  long long pending = 0;       // tasks left in the schedule
  long long overdue = 0;       // of which already due
  std::vector<long long> lateness_ms;  // fired - due of each forwarded task
  // The sweep stopped at a task whose keys are moving to another node (slot migration):
  // nothing was written for it; sweep again shortly.
  bool migrating = false;
  long long paused_until_ms = -1;  // -1: not paused; 0: until resumed; else the end of the pause
  long long late = 0;              // tasks dead-lettered for lateness (not in forwarded)
  long long now_ms() const { return now_us / 1000; }
  bool more_due() const { return next_due_ms >= 0 && next_due_ms <= now_ms(); }
};

// A range call's reply: {acted, examined, cursor}.
struct RangeResult {
  long long acted = 0;     // cancelled, or promoted
  long long examined = 0;
  std::string cursor;      // empty: the range is done
};

// Decoders read the replies of the v2 functions and return nullopt for any other shape (errors
// included).
std::optional<RangeResult> decode_range(const Reply& reply);
std::optional<RunNowResult> decode_run_now(const Reply& reply);
std::optional<PauseResult> decode_pause(const Reply& reply);
std::optional<ScheduleResult> decode_schedule(const Reply& reply);
std::optional<RescheduleResult> decode_reschedule(const Reply& reply);
std::optional<ClaimResult> decode_claim(const Reply& reply);
std::optional<SweepResult> decode_sweep(const Reply& reply);

}  // namespace expiry
