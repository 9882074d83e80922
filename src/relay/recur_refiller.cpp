// See recur_refiller.h.
#include "relay/recur_refiller.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "functions/function_library.h"
#include "functions/recur_calls.h"
#include "recur/recur_plan.h"

namespace expiry {

RecurRefiller::RecurRefiller(EventLoop& loop, FunctionCaller& functions, KeyLayout keys, std::optional<int> db,
                             RelayStats& stats)
    : loop_(loop),
      functions_(functions),
      keys_(std::move(keys)),
      db_(db),
      stats_(stats),
      soon_(loop, [this] { pass(); }),
      periodic_(loop, [this] {
        periodic_.arm(kRecurCheckPeriod);
        request();
      }) {}

void RecurRefiller::start() {
  stopped_ = false;
  if (!periodic_.armed()) periodic_.arm(kRecurCheckPeriod);
  request();
}

void RecurRefiller::request() {
  if (stopped_) return;
  if (in_flight_ > 0) {
    again_ = true;
    return;
  }
  if (!soon_.armed()) soon_.arm(std::chrono::microseconds(0));
}

void RecurRefiller::stop() {
  stopped_ = true;
  soon_.cancel();
  periodic_.cancel();
}

void RecurRefiller::pass() {
  if (stopped_) return;
  again_ = false;
  ++in_flight_;
  functions_.fcall(recur_refills_argv(keys_, kRefillBatch), [this](const Reply& reply) { on_refills(reply); });
}

// A hiredis callback: nothing may throw out of it.
void RecurRefiller::on_refills(const Reply& reply) {
  const std::optional<RecurRefills> refills = decode_recur_refills(reply);
  if (!refills) {
    // A library without recurring schedules, or a lost connection: the next (re)connect or
    // period tries again.
    if (reply.type == Reply::Type::Error) {
      ++stats_.recur_refill_errors;
      spdlog::warn("recurring schedules of {}: refills failed: {}", keys_.schedule_key(), reply.str);
    }
    call_done();
    return;
  }
  for (const RecurRefillRow& row : refills->rows) {
    std::vector<RecurInstant> instants;
    try {
      instants = refill_instants(row, refills->now_ms);
    } catch (const std::exception& e) {
      ++stats_.recur_refill_errors;
      spdlog::error("recurring schedule {}: its stored rule '{}' in zone '{}' does not read back: {}", row.id, row.rule,
                    row.tz, e.what());
      continue;
    }
    ++in_flight_;
    functions_.fcall(recur_refill_argv(keys_, row.id, row.version, instants, db_), [this, id = row.id](const Reply& r) {
      if (decode_recur_refill(r)) {
        ++stats_.recur_refills;
      } else {
        ++stats_.recur_refill_errors;
        spdlog::warn("recurring schedule {}: refill failed: {}", id, r.str);
      }
      call_done();
    });
  }
  // A full batch may have left more waiting.
  if (refills->rows.size() >= static_cast<size_t>(kRefillBatch)) again_ = true;
  call_done();
}

void RecurRefiller::call_done() {
  if (--in_flight_ > 0) return;
  if (again_ && !stopped_) {
    again_ = false;
    soon_.arm(std::chrono::microseconds(0));
  }
}

}  // namespace expiry
