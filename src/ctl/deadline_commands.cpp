// run-now, bulk cancel, pause and resume: the operator's deadline commands, on the Producer
// (the range and pause operations go to every bucket in turn: producer/bucket_calls.h).
#include <algorithm>
#include <chrono>
#include <iostream>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/task_listing.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "producer/producer.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

constexpr auto kProgressEvery = std::chrono::seconds(1);

// A time as the range commands read it ("<epoch ms>" or "+MS"), checked before anything is sent.
void check_time(const std::optional<std::string>& text, const char* option) {
  if (text && !parse_due_before(*text, 0)) {
    throw ConfigError(std::string(option) + " must be epoch milliseconds, or +MS for that many milliseconds from now");
  }
}

void check_range(const TaskRange& range) {
  if (!range.prefix && !range.due_before && !range.due_after) {
    throw ConfigError("give at least one of --prefix, --due-before, --due-after");
  }
  if (range.prefix && range.prefix->empty()) throw ConfigError("--prefix must not be empty");
  check_time(range.due_before, "--due-before");
  check_time(range.due_after, "--due-after");
}

// The filter of `range`, its relative times resolved on the Redis clock.
RangeFilter filter_of(Producer& producer, const TaskRange& range) {
  const bool relative = (range.due_before && due_before_is_relative(*range.due_before)) ||
                        (range.due_after && due_before_is_relative(*range.due_after));
  const long long now = relative ? producer.now_ms() : 0;
  RangeFilter filter;
  if (range.prefix) filter.prefix = *range.prefix;
  if (range.due_before) filter.before_ms = parse_due_before(*range.due_before, now);
  if (range.due_after) filter.after_ms = parse_due_before(*range.due_after, now);
  return filter;
}

// Prints a progress line at most every kProgressEvery while a range walk runs.
RangeProgressFn progress_lines(const char* verb) {
  auto last_progress = std::chrono::steady_clock::now();
  return [verb, last_progress](const RangeProgress& p) mutable {
    if (std::chrono::steady_clock::now() - last_progress < kProgressEvery) return;
    last_progress = std::chrono::steady_clock::now();
    std::cerr << "progress: " << p.so_far.acted << " " << verb << ", " << p.so_far.examined << " examined, bucket "
              << (p.bucket + 1) << " of " << p.buckets << "\n";
  };
}

std::string until_text(long long until_ms) {
  if (until_ms == 0) return "until resumed";
  const auto iso = iso8601_utc(until_ms);
  return "until " + (iso ? *iso : std::to_string(until_ms)) + " (" + std::to_string(until_ms) + ")";
}

}  // namespace

int run_run_now(const CtlTarget& target, const std::string& id) {
  if (auto err = task_id_error(id)) throw ConfigError(*err);
  CtlSession session(target);
  const RunNowResult result = session.producer.run_now(id);
  if (!result.pending) {
    std::cout << "not pending: " << escape_text(id) << "\n";
    return kExitNotPending;
  }
  std::cout << "run-now " << escape_text(id) << " previous_due_ms=" << result.previous_due_ms
            << " due_ms=" << result.due_ms
            << (result.due_ms == result.previous_due_ms ? " (it was due already)" : "") << "\n";
  return kExitOk;
}

int run_run_now_range(const CtlTarget& target, const TaskRange& range) {
  check_range(range);
  if (range.due_after) throw ConfigError("run-now takes no --due-after: only tasks not yet due are promoted");
  CtlSession session(target);
  const RangeTotals totals = session.producer.run_now_range(filter_of(session.producer, range), progress_lines("promoted"));
  std::cout << "promoted " << totals.acted << " tasks (" << totals.examined << " examined in "
            << session.layout.buckets << " bucket" << (session.layout.buckets == 1 ? "" : "s") << ")\n";
  return kExitOk;
}

int run_cancel_range(const CtlTarget& target, const TaskRange& range) {
  check_range(range);
  CtlSession session(target);
  const RangeTotals totals = session.producer.cancel_range(filter_of(session.producer, range), progress_lines("cancelled"));
  std::cout << "cancelled " << totals.acted << " tasks (" << totals.examined << " examined in "
            << session.layout.buckets << " bucket" << (session.layout.buckets == 1 ? "" : "s") << ")\n";
  return kExitOk;
}

int run_pause(const CtlTarget& target, long long for_ms) {
  if (for_ms < 0) throw ConfigError("--for must be positive");
  CtlSession session(target);
  // Each bucket's end is on its node's clock: the latest is printed.
  const PauseResult r = session.producer.pause(std::chrono::milliseconds(for_ms));
  std::cout << "paused " << until_text(r.value) << ": " << session.layout.buckets << " bucket"
            << (session.layout.buckets == 1 ? "" : "s") << ", " << r.pending << " pending, " << r.overdue
            << " overdue (held)\n";
  return kExitOk;
}

int run_resume(const CtlTarget& target) {
  CtlSession session(target);
  const PauseResult r = session.producer.resume();
  std::cout << "resumed: " << r.value << " of " << session.layout.buckets << " bucket"
            << (session.layout.buckets == 1 ? " was" : "s were") << " paused; " << r.overdue
            << " overdue tasks are being forwarded, " << r.pending << " pending\n";
  return kExitOk;
}

}  // namespace expiry
