// See event_claimer.h.
#include "relay/event_claimer.h"

#include <spdlog/spdlog.h>

#include "protocol/function_library.h"

namespace expiry {

EventClaimer::EventClaimer(FunctionCaller& functions, const RelayConfig& config, const KeyLayout& keys,
                                 RelayStats& stats)
    : functions_(functions), config_(config), keys_(keys), stats_(stats) {}

void EventClaimer::fire(std::string_view id) {
  if (inflight_ >= static_cast<size_t>(config_.max_inflight_claims)) {
    ++stats_.claims_deferred;
    if (on_needs_sweep_) on_needs_sweep_();
    return;
  }
  ++inflight_;
  functions_.fcall(claim_argv(keys_, id, "event", config_.stream, config_.group), [this](const Reply& reply) {
    --inflight_;
    auto result = decode_claim(reply);
    if (!result) {
      ++stats_.claim_errors;
      if (!reply.is_io_error()) spdlog::error("claim failed: {}", reply.describe());
      if (on_needs_sweep_) on_needs_sweep_();
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
        if (on_not_due_) on_not_due_(result->due_ms);
        break;
    }
  });
}

}  // namespace expiry
