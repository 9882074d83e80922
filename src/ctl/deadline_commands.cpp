// run-now, bulk cancel, pause and resume: the operator's deadline commands. The range and
// pause operations act on one bucket per call, so they are sent to every bucket in turn (on a
// cluster each to the node owning it), and the range ones loop on the cursor the library
// returns. Calls go one at a time: a pipeline of them would hold Redis for their sum.
#include <algorithm>
#include <chrono>
#include <iostream>

#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/redis_values.h"
#include "ctl/task_listing.h"
#include "io/sync/routed_client.h"
#include "protocol/errors.h"
#include "protocol/function_library.h"
#include "protocol/key_layout.h"
#include "protocol/text_escape.h"

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
RangeFilter filter_of(RoutedClient& redis, const TaskRange& range) {
  const bool relative = (range.due_before && due_before_is_relative(*range.due_before)) ||
                        (range.due_after && due_before_is_relative(*range.due_after));
  const long long now = relative ? redis_now_ms(redis) : 0;
  RangeFilter filter;
  if (range.prefix) filter.prefix = *range.prefix;
  if (range.due_before) filter.before_ms = parse_due_before(*range.due_before, now);
  if (range.due_after) filter.after_ms = parse_due_before(*range.due_after, now);
  return filter;
}

struct RangeTotals {
  long long acted = 0;
  long long examined = 0;
};

// Walks every bucket with the calls `argv_of(keys, cursor)` makes until each returns an empty
// cursor; `what` names the function in errors and `verb` the progress lines.
template <typename ArgvOf>
RangeTotals walk_buckets(CtlSession& session, const char* what, const char* verb, ArgvOf argv_of) {
  RangeTotals totals;
  auto last_progress = std::chrono::steady_clock::now();
  for (int b = 0; b < session.layout.buckets; ++b) {
    const KeyLayout keys(session.layout.ns, b);
    std::string cursor;
    do {
      const Reply reply = session.redis.fcall(argv_of(keys, cursor), CtlLayout::slot_of_bucket(b));
      expect_ok(reply, what);
      const auto result = decode_range(reply);
      if (!result) throw ReplyError(std::string(what) + ": unexpected reply " + reply.describe());
      totals.acted += result->acted;
      totals.examined += result->examined;
      cursor = result->cursor;
      if (std::chrono::steady_clock::now() - last_progress >= kProgressEvery) {
        last_progress = std::chrono::steady_clock::now();
        std::cerr << "progress: " << totals.acted << " " << verb << ", " << totals.examined << " examined, bucket "
                  << (b + 1) << " of " << session.layout.buckets << "\n";
      }
    } while (!cursor.empty());
  }
  return totals;
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
  const KeyLayout keys = session.layout.keys_of_task(id);
  const Reply reply =
      session.redis.fcall(run_now_argv(keys, id, session.layout.db), CtlLayout::slot_of_bucket(keys.bucket()));
  expect_ok(reply, "FCALL expiry_run_now");
  const auto result = decode_run_now(reply);
  if (!result) throw ReplyError("FCALL expiry_run_now: unexpected reply " + reply.describe());
  if (!result->pending) {
    std::cout << "not pending: " << escape_text(id) << "\n";
    return kExitNotPending;
  }
  std::cout << "run-now " << escape_text(id) << " previous_due_ms=" << result->previous_due_ms
            << " due_ms=" << result->due_ms
            << (result->due_ms == result->previous_due_ms ? " (it was due already)" : "") << "\n";
  return kExitOk;
}

int run_run_now_range(const CtlTarget& target, const TaskRange& range) {
  check_range(range);
  if (range.due_after) throw ConfigError("run-now takes no --due-after: only tasks not yet due are promoted");
  CtlSession session(target);
  const RangeFilter filter = filter_of(session.redis, range);
  const int db = session.layout.db;
  const RangeTotals totals =
      walk_buckets(session, "FCALL expiry_run_now_range", "promoted", [&](const KeyLayout& keys, const std::string& c) {
        return run_now_range_argv(keys, filter, c, kRangeCallLimit, db);
      });
  std::cout << "promoted " << totals.acted << " tasks (" << totals.examined << " examined in "
            << session.layout.buckets << " bucket" << (session.layout.buckets == 1 ? "" : "s") << ")\n";
  return kExitOk;
}

int run_cancel_range(const CtlTarget& target, const TaskRange& range) {
  check_range(range);
  CtlSession session(target);
  const RangeFilter filter = filter_of(session.redis, range);
  const RangeTotals totals =
      walk_buckets(session, "FCALL expiry_cancel_range", "cancelled", [&](const KeyLayout& keys, const std::string& c) {
        return cancel_range_argv(keys, filter, c, kRangeCallLimit);
      });
  std::cout << "cancelled " << totals.acted << " tasks (" << totals.examined << " examined in "
            << session.layout.buckets << " bucket" << (session.layout.buckets == 1 ? "" : "s") << ")\n";
  return kExitOk;
}

namespace {
// One call of `what` per bucket (`argv_of(keys)`), each on the node that owns it; the replies'
// sums (pending, overdue, and `value` summed or, with `latest`, its largest).
template <typename ArgvOf>
PauseResult call_every_bucket(CtlSession& session, const char* what, bool latest, ArgvOf argv_of) {
  PauseResult total;
  for (int b = 0; b < session.layout.buckets; ++b) {
    const Reply reply = session.redis.fcall(argv_of(KeyLayout(session.layout.ns, b)), CtlLayout::slot_of_bucket(b));
    expect_ok(reply, what);
    const auto result = decode_pause(reply);
    if (!result) throw ReplyError(std::string(what) + ": unexpected reply " + reply.describe());
    total.value = latest ? std::max(total.value, result->value) : total.value + result->value;
    total.pending += result->pending;
    total.overdue += result->overdue;
  }
  return total;
}
}  // namespace

int run_pause(const CtlTarget& target, long long for_ms) {
  if (for_ms < 0) throw ConfigError("--for must be positive");
  CtlSession session(target);
  // Each bucket's end is on its node's clock: the latest is printed.
  const PauseResult r = call_every_bucket(session, "FCALL expiry_pause", true,
                                          [&](const KeyLayout& keys) { return pause_argv(keys, for_ms); });
  std::cout << "paused " << until_text(r.value) << ": " << session.layout.buckets << " bucket"
            << (session.layout.buckets == 1 ? "" : "s") << ", " << r.pending << " pending, " << r.overdue
            << " overdue (held)\n";
  return kExitOk;
}

int run_resume(const CtlTarget& target) {
  CtlSession session(target);
  const PauseResult r = call_every_bucket(session, "FCALL expiry_resume", false, [&](const KeyLayout& keys) {
    return resume_argv(keys, session.layout.db);
  });
  std::cout << "resumed: " << r.value << " of " << session.layout.buckets << " bucket"
            << (session.layout.buckets == 1 ? " was" : "s were") << " paused; " << r.overdue
            << " overdue tasks are being forwarded, " << r.pending << " pending\n";
  return kExitOk;
}

}  // namespace expiry
