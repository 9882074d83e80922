// See event_claimer.h.
#include "relay/event_claimer.h"

#include <spdlog/spdlog.h>

#include "functions/function_library.h"
#include "redis/redis_error.h"

namespace expiry {

EventClaimer::EventClaimer(FunctionCaller& functions, const RelayConfig& config, RelayStats& stats)
    : functions_(functions), config_(config), stats_(stats) {}

void EventClaimer::fire(const KeyLayout& keys, const std::string& stream, const ClaimLimits& limits,
                        std::string_view id) {
  const int bucket = keys.bucket();
  if (inflight_ >= static_cast<size_t>(config_.max_inflight_claims)) {
    ++stats_.claims_deferred;
    if (on_needs_sweep_) on_needs_sweep_(bucket);
    return;
  }
  ++inflight_;
  functions_.fcall(claim_argv(keys, id, "event", stream, config_.group, limits), [this, bucket](const Reply& reply) {
    --inflight_;
    auto result = decode_claim(reply);
    if (!result) {
      ++stats_.claim_errors;
      const RedisErrorKind kind = classify(reply);
      if (kind == RedisErrorKind::Moved) {
        if (on_moved_) on_moved_();
      } else if (!reply.is_io_error() && kind != RedisErrorKind::Migrating && kind != RedisErrorKind::Ask &&
                 kind != RedisErrorKind::TryAgain && kind != RedisErrorKind::ClusterDown) {
        spdlog::error("claim failed: {}", reply.describe());
      }
      if (on_needs_sweep_) on_needs_sweep_(bucket);
      return;
    }
    switch (result->outcome) {
      case ClaimResult::Outcome::Forwarded:
        ++stats_.forwarded_event;
        stats_.observe_lateness_ms(result->lateness_ms);
        break;
      case ClaimResult::Outcome::NotPending:
        ++stats_.claims_lost;
        break;
      case ClaimResult::Outcome::NotDue:
        ++stats_.claims_not_due;
        if (on_not_due_) on_not_due_(bucket, result->due_ms);
        break;
      case ClaimResult::Outcome::DeadLettered:
        ++stats_.dead_lettered_late_event;
        break;
      case ClaimResult::Outcome::Paused:
        ++stats_.claims_paused;
        break;
    }
  });
}

}  // namespace expiry
