// See sweeper.h. The timer callback decides its next delay, like an ae timeProc: the
// earliest due score from the sweep reply, capped by the sweep period.
#include "relay/sweeper.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "functions/function_library.h"
#include "redis/redis_error.h"
#include "relay/due_clock.h"
#include "relay/sweep_timing.h"

namespace expiry {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

namespace {
// How soon a sweep is tried again while its bucket's slot moves between nodes (TRYAGAIN, ASK,
// a migrating key): a move of thousands of keys takes about a second.
constexpr milliseconds kSlotMoveRetry{50};
// How soon a sweep is tried again on a node that refuses writes (READONLY, MASTERDOWN): readiness
// comes back within this once it is a master again.
constexpr milliseconds kNotMasterRetry{1000};
}  // namespace

Sweeper::Sweeper(EventLoop& loop, FunctionCaller& functions, const RelayConfig& config, KeyLayout keys,
                 std::string stream, ClaimLimits limits, RelayStats& stats)
    : loop_(loop),
      functions_(functions),
      config_(config),
      keys_(std::move(keys)),
      stream_(std::move(stream)),
      limits_(std::move(limits)),
      stats_(stats),
      timer_(loop, [this] { sweep_now("timer"); }) {}

void Sweeper::sweep_now(const char* reason) {
  if (stopped_) return;
  if (in_flight_ > 0) {
    again_ = true;
    return;
  }
  spdlog::trace("sweep: {}", reason);
  timer_.cancel();
  run_batch();
}

void Sweeper::note_due(long long due_ms) {
  if (stopped_ || !config_.next_due_timer) return;
  if (in_flight_ > 0) {
    again_ = true;  // the in-flight sweep may have read the schedule before this task arrived
    return;
  }
  if (server_now_us_ == 0) {
    sweep_now("due notice before the first sweep");
    return;
  }
  arm_within(coalesced_delay(due_notice_delay(due_ms, server_now_us_, Clock::now() - server_now_seen_at_, config_.sweep_interval),
                             config_.sweep_coalesce, config_.sweep_interval));
}

void Sweeper::stop() {
  stopped_ = true;
  draining_ = false;
  timer_.cancel();
}

void Sweeper::arm_within(microseconds delay) {
  if (needs_earlier_arm(timer_.armed(), timer_.remaining(), delay)) timer_.arm(delay);
}

void Sweeper::fill_pipeline() {
  if (stopped_) return;
  timer_.cancel();
  while (in_flight_ < config_.sweep_pipeline) run_batch();
}

void Sweeper::run_batch() {
  ++in_flight_;
  again_ = false;
  const auto sent_at = Clock::now();
  functions_.fcall(sweep_argv(keys_, stream_, config_.sweep_batch, "sweep", config_.group, limits_),
                   [this, sent_at](const Reply& reply) { on_batch_reply(reply, sent_at); });
}

void Sweeper::on_batch_reply(const Reply& reply, Clock::time_point sent_at) {
  --in_flight_;
  const auto now = Clock::now();
  ++stats_.sweep_batches;
  stats_.sweep_time_us += duration_cast<microseconds>(now - sent_at).count();
  if (stopped_) return;

  auto result = decode_sweep(reply);
  if (!result) {
    draining_ = false;
    ++stats_.sweep_errors;
    if (readiness_ != nullptr) readiness_->on_failure(reply, "sweep of " + keys_.schedule_key());
    on_batch_error(reply);
    return;
  }
  if (readiness_ != nullptr) readiness_->on_success();
  stats_.forwarded_sweep += static_cast<uint64_t>(result->forwarded);
  stats_.dead_lettered_late_sweep += static_cast<uint64_t>(result->late);
  for (long long ms : result->lateness_ms) stats_.observe_lateness_ms(ms);
  auto& gauges = stats_.schedules[keys_.bucket()];
  gauges.pending = result->pending;
  gauges.overdue = result->overdue;
  // A paused reply's next_due is the end of the pause (or -1), not the earliest task: more_due()
  // is false, so a paused bucket reports its overdue count but no oldest age.
  gauges.oldest_overdue_ms = result->more_due() ? saturating_sub(result->now_ms(), result->next_due_ms) : 0;
  if (result->paused_until_ms >= 0 && gauges.paused_until_ms < 0) {
    spdlog::info("{} is paused ({}): holding {} overdue task(s) until it resumes", keys_.schedule_key(),
                 result->paused_until_ms == 0 ? std::string("until resumed")
                                              : "until " + std::to_string(result->paused_until_ms) + " ms",
                 result->overdue);
  } else if (result->paused_until_ms < 0 && gauges.paused_until_ms >= 0) {
    spdlog::info("{} resumed: forwarding what was held", keys_.schedule_key());
  }
  gauges.paused_until_ms = result->paused_until_ms;
  server_now_us_ = result->now_us;
  server_now_seen_at_ = now;
  if (result->migrating) {
    // A task's keys are moving to another node: nothing more can be claimed here until the
    // slot has moved (then MOVED hands the bucket to that node's relay).
    draining_ = false;
    ++stats_.sweeps_migrating;
    if (in_flight_ == 0) timer_.arm(kSlotMoveRetry);
    return;
  }
  draining_ = result->more_due();

  if (draining_) {
    // Let the loop serve events between batches, so a large backlog never starves them.
    loop_.defer(alive_, [this] { fill_pipeline(); });
    return;
  }
  if (in_flight_ > 0) return;  // the last reply decides what comes next
  if (again_) {
    loop_.defer(alive_, [this] { sweep_now("asked again"); });
    return;
  }
  const auto delay = next_sweep_delay(result->next_due_ms, result->now_us, config_.next_due_timer, config_.sweep_interval);
  const bool for_a_task = config_.next_due_timer && result->next_due_ms >= 0;
  timer_.arm(for_a_task ? coalesced_delay(delay, config_.sweep_coalesce, config_.sweep_interval) : delay);
}

void Sweeper::on_batch_error(const Reply& reply) {
  if (reply.is_io_error()) return;  // the reconnect sweeps again
  switch (classify(reply)) {
    case RedisErrorKind::Moved:
      spdlog::info("sweep of {}: {}; the bucket has moved to another node", keys_.schedule_key(), reply.str);
      if (on_moved_) on_moved_();
      timer_.arm(config_.sweep_interval);
      return;
    case RedisErrorKind::Ask:
    case RedisErrorKind::TryAgain:
    case RedisErrorKind::Migrating:
    case RedisErrorKind::ClusterDown:
      spdlog::debug("sweep of {}: {}; the slot is moving, retrying in {} ms", keys_.schedule_key(), reply.str,
                    kSlotMoveRetry.count());
      if (in_flight_ == 0) timer_.arm(kSlotMoveRetry);
      return;
    case RedisErrorKind::ReadOnly:
    case RedisErrorKind::MasterDown:
      // Not a master (now): the relay is not ready; try again soon to see it serve writes again.
      spdlog::error("sweep failed: {}; the node does not take writes; retrying in {} ms ({})", reply.describe(),
                    std::min(config_.sweep_interval, kNotMasterRetry).count(), keys_.schedule_key());
      timer_.arm(std::min(config_.sweep_interval, kNotMasterRetry));
      return;
    default:
      spdlog::error("sweep failed: {}; retrying in {} ms ({})", reply.describe(), config_.sweep_interval.count(),
                    keys_.schedule_key());
      timer_.arm(config_.sweep_interval);
  }
}

}  // namespace expiry
