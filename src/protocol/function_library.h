// The expiry_v1 Redis Function library (src/lua/expiry.lua): its source, the FCALL argument
// lists of each operation, and their reply decoding. Pure, no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/key_layout.h"
#include "protocol/reply.h"

namespace expiry {

constexpr const char* kLibraryName = "expiry_v1";

// The Lua source, embedded at build time.
const std::string& function_library_source();
// FUNCTION LOAD REPLACE <source>.
std::vector<std::string> load_library_argv();
// The reply says the library is not loaded (after FUNCTION FLUSH or a restart without it).
bool is_function_missing(const Reply& reply);

enum class ScheduleMode { Delay, At };

// `db`, the database the caller selected (0 on a cluster), is named in the wake message the
// call may publish, so that relays serving other databases ignore it (wake_message.h); nullopt
// sends the form without it.
std::vector<std::string> schedule_argv(const KeyLayout& keys, std::string_view id, ScheduleMode mode,
                                       long long ms, std::string_view payload, std::string_view stream = {},
                                       std::optional<int> db = std::nullopt);
std::vector<std::string> reschedule_argv(const KeyLayout& keys, std::string_view id, ScheduleMode mode, long long ms,
                                         std::optional<int> db = std::nullopt);
std::vector<std::string> cancel_argv(const KeyLayout& keys, std::string_view id);
std::vector<std::string> claim_argv(const KeyLayout& keys, std::string_view id, std::string_view via,
                                    std::string_view stream, std::string_view group);
std::vector<std::string> sweep_argv(const KeyLayout& keys, std::string_view stream, int limit,
                                    std::string_view via, std::string_view group);

struct ScheduleResult {
  long long due_ms = 0;
  bool replaced = false;
};
struct RescheduleResult {
  long long due_ms = 0;
  long long now_ms = 0;
};
struct ClaimResult {
  enum class Outcome { Forwarded, NotPending, NotDue } outcome = Outcome::NotPending;
  std::string entry_id;      // Forwarded
  long long lateness_ms = 0; // Forwarded: fired - due
  long long due_ms = 0;      // NotDue
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
  long long now_ms() const { return now_us / 1000; }
  bool more_due() const { return next_due_ms >= 0 && next_due_ms <= now_ms(); }
};

// Decoders return nullopt for replies of an unexpected shape (errors included).
std::optional<ScheduleResult> decode_schedule(const Reply& reply);
std::optional<RescheduleResult> decode_reschedule(const Reply& reply);
std::optional<ClaimResult> decode_claim(const Reply& reply);
std::optional<SweepResult> decode_sweep(const Reply& reply);

}  // namespace expiry
