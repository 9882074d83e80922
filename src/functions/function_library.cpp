// FCALL argument lists and reply decoding for the expiry_v1 library's v2 functions; see
// function_library.h.
#include "functions/function_library.h"

#include "generated/expiry_lua.h"  // generated: kExpiryLuaSource
#include "redis/redis_error.h"

namespace expiry {

const std::string& function_library_source() {
  static const std::string source(kExpiryLuaSource);
  return source;
}

std::vector<std::string> load_library_argv() { return {"FUNCTION", "LOAD", "REPLACE", function_library_source()}; }

bool is_function_missing(const Reply& reply) {
  return classify(reply) == RedisErrorKind::FunctionMissing;
}

namespace {
// FCALL <function> 3 <schedule> <trigger> <shadow> <id>: the head of every per-task call.
std::vector<std::string> task_call(const char* function, const KeyLayout& keys, std::string_view id) {
  return {"FCALL", function, "3", keys.schedule_key(), keys.trigger_key(id), keys.shadow_key(id), std::string(id)};
}

const char* mode_word(ScheduleMode mode) { return mode == ScheduleMode::Delay ? "delay" : "at"; }
}  // namespace

std::vector<std::string> schedule_argv(const KeyLayout& keys, std::string_view id, ScheduleMode mode,
                                       long long ms, std::string_view payload, std::string_view stream,
                                       std::optional<int> db, std::string_view options) {
  auto argv = task_call("expiry_v2_schedule", keys, id);
  argv.insert(argv.end(), {mode_word(mode), std::to_string(ms), std::string(payload)});
  if (!stream.empty() || db || !options.empty()) argv.emplace_back(stream);  // '' is the default stream
  if (db || !options.empty()) argv.push_back(db ? std::to_string(*db) : std::string());
  if (!options.empty()) argv.emplace_back(options);
  return argv;
}

std::vector<std::string> reschedule_argv(const KeyLayout& keys, std::string_view id, ScheduleMode mode, long long ms,
                                         std::optional<int> db) {
  auto argv = task_call("expiry_v2_reschedule", keys, id);
  argv.insert(argv.end(), {mode_word(mode), std::to_string(ms)});
  if (db) argv.push_back(std::to_string(*db));
  return argv;
}

std::vector<std::string> cancel_argv(const KeyLayout& keys, std::string_view id) {
  return task_call("expiry_v2_cancel", keys, id);
}

std::vector<std::string> claim_argv(const KeyLayout& keys, std::string_view id, std::string_view via,
                                    std::string_view stream, std::string_view group, const ClaimLimits& limits) {
  std::vector<std::string> argv{"FCALL", "expiry_v2_claim", limits.dead_stream.empty() ? "4" : "5", keys.schedule_key(),
                                keys.trigger_key(id), keys.shadow_key(id), std::string(stream)};
  if (!limits.dead_stream.empty()) argv.push_back(limits.dead_stream);
  argv.insert(argv.end(), {std::string(id), std::string(via), std::string(group), std::to_string(limits.max_late_ms)});
  return argv;
}

std::vector<std::string> sweep_argv(const KeyLayout& keys, std::string_view stream, int limit,
                                    std::string_view via, std::string_view group, const ClaimLimits& limits) {
  std::vector<std::string> argv{"FCALL", "expiry_v2_sweep", limits.dead_stream.empty() ? "2" : "3", keys.schedule_key(),
                                std::string(stream)};
  if (!limits.dead_stream.empty()) argv.push_back(limits.dead_stream);
  argv.insert(argv.end(), {std::to_string(limit), std::string(via), std::string(group),
                           std::to_string(limits.max_late_ms)});
  return argv;
}

namespace {
std::string optional_ms(std::optional<long long> ms) { return ms ? std::to_string(*ms) : std::string(); }
std::string optional_db(std::optional<int> db) { return db ? std::to_string(*db) : std::string(); }
}  // namespace

std::vector<std::string> cancel_range_argv(const KeyLayout& keys, const RangeFilter& filter, std::string_view cursor,
                                           int limit) {
  return {"FCALL",        "expiry_v2_cancel_range",          "1", keys.schedule_key(), optional_ms(filter.after_ms),
          optional_ms(filter.before_ms), filter.prefix, std::string(cursor), std::to_string(limit)};
}

std::vector<std::string> run_now_range_argv(const KeyLayout& keys, const RangeFilter& filter, std::string_view cursor,
                                            int limit, std::optional<int> db) {
  return {"FCALL",       "expiry_v2_run_now_range", "1", keys.schedule_key(), optional_ms(filter.before_ms),
          filter.prefix, std::string(cursor),    std::to_string(limit), optional_db(db)};
}

std::vector<std::string> run_now_argv(const KeyLayout& keys, std::string_view id, std::optional<int> db) {
  auto argv = task_call("expiry_v2_run_now", keys, id);
  argv.push_back(optional_db(db));
  return argv;
}

std::vector<std::string> pause_argv(const KeyLayout& keys, long long for_ms) {
  return {"FCALL", "expiry_v2_pause", "1", keys.schedule_key(), std::to_string(for_ms)};
}

std::vector<std::string> resume_argv(const KeyLayout& keys, std::optional<int> db) {
  return {"FCALL", "expiry_v2_resume", "1", keys.schedule_key(), optional_db(db)};
}

namespace {
bool is_int(const Reply& r) { return r.type == Reply::Type::Integer; }
}  // namespace

std::optional<ScheduleResult> decode_schedule(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 2) return std::nullopt;
  if (!is_int(reply.elements[0]) || !is_int(reply.elements[1])) return std::nullopt;
  return ScheduleResult{reply.elements[0].integer, reply.elements[1].integer == 1, reply.elements[1].integer == 2};
}

std::optional<RescheduleResult> decode_reschedule(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 2) return std::nullopt;
  if (!is_int(reply.elements[0]) || !is_int(reply.elements[1])) return std::nullopt;
  return RescheduleResult{reply.elements[0].integer, reply.elements[1].integer};
}

std::optional<ClaimResult> decode_claim(const Reply& reply) {
  // {outcome, entry_id, lateness_ms, due_ms, paused_until_ms}
  if (reply.type != Reply::Type::Array || reply.elements.size() != 5) return std::nullopt;
  const auto& e = reply.elements;
  if (!is_int(e[0]) || e[1].type != Reply::Type::String || !is_int(e[2]) || !is_int(e[3]) || !is_int(e[4])) {
    return std::nullopt;
  }
  ClaimResult r;
  switch (e[0].integer) {
    case 1:
    case 2:
      if (e[1].str.empty()) return std::nullopt;
      r.outcome = e[0].integer == 1 ? ClaimResult::Outcome::Forwarded : ClaimResult::Outcome::DeadLettered;
      r.entry_id = e[1].str;
      r.lateness_ms = e[2].integer;
      return r;
    case 0:
      r.outcome = ClaimResult::Outcome::NotPending;
      return r;
    case -1:
      r.outcome = ClaimResult::Outcome::NotDue;
      r.due_ms = e[3].integer;
      return r;
    case -2:
      r.outcome = ClaimResult::Outcome::Paused;
      r.paused_until_ms = e[4].integer;
      return r;
    default:
      return std::nullopt;
  }
}

std::optional<SweepResult> decode_sweep(const Reply& reply) {
  // {forwarded, next_due_ms, now_us, pending, overdue, {lateness_ms...}, migrating, paused_until_ms, late}
  if (reply.type != Reply::Type::Array || reply.elements.size() != 9) return std::nullopt;
  const auto& e = reply.elements;
  for (size_t i : {0, 1, 2, 3, 4, 6, 7, 8}) {
    if (!is_int(e[i])) return std::nullopt;
  }
  const Reply& lateness = e[5];
  if (lateness.type != Reply::Type::Array) return std::nullopt;
  SweepResult r{e[0].integer, e[1].integer, e[2].integer, e[3].integer, e[4].integer, {}};
  r.lateness_ms.reserve(lateness.elements.size());
  for (const auto& l : lateness.elements) {
    if (!is_int(l)) return std::nullopt;
    r.lateness_ms.push_back(l.integer);
  }
  if (r.lateness_ms.size() != static_cast<size_t>(r.forwarded)) return std::nullopt;
  r.migrating = e[6].integer != 0;
  r.paused_until_ms = e[7].integer;
  r.late = e[8].integer;
  return r;
}

std::optional<RangeResult> decode_range(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 3 || !is_int(reply.elements[0]) ||
      !is_int(reply.elements[1]) || reply.elements[2].type != Reply::Type::String) {
    return std::nullopt;
  }
  return RangeResult{reply.elements[0].integer, reply.elements[1].integer, reply.elements[2].str};
}

std::optional<RunNowResult> decode_run_now(const Reply& reply) {
  // {pending (0|1), previous_due_ms, due_ms}
  if (reply.type != Reply::Type::Array || reply.elements.size() != 3) return std::nullopt;
  for (const auto& e : reply.elements) {
    if (!is_int(e)) return std::nullopt;
  }
  if (reply.elements[0].integer == 0) return RunNowResult{};
  if (reply.elements[0].integer != 1) return std::nullopt;
  return RunNowResult{true, reply.elements[1].integer, reply.elements[2].integer};
}

std::optional<PauseResult> decode_pause(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 3) return std::nullopt;
  for (const auto& e : reply.elements) {
    if (!is_int(e)) return std::nullopt;
  }
  return PauseResult{reply.elements[0].integer, reply.elements[1].integer, reply.elements[2].integer};
}

}  // namespace expiry
