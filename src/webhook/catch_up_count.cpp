// See catch_up_count.h.
#include "webhook/catch_up_count.h"

#include <spdlog/spdlog.h>

#include "base/integers.h"
#include "webhook/dispatcher.h"

namespace expiry {

namespace {

// The time part of a stream entry id ("1700000000000-0"), or nullopt.
std::optional<long long> id_ms(const std::string& entry_id) {
  return parse_int64(std::string_view(entry_id).substr(0, entry_id.find('-')));
}

}  // namespace

CatchUpCount::CatchUpCount(EventLoop& loop, const WebhookConfig& hooks, std::string where, int64_t start_ms,
                           std::chrono::milliseconds quiet, std::function<bool()> idle)
    : hooks_(hooks), where_(std::move(where)), start_ms_(start_ms), quiet_(quiet), idle_(std::move(idle)),
      quiet_timer_(loop, [this] { quiet_tick(); }) {}

void CatchUpCount::start() {
  if (done_) return;
  if (hooks_.default_endpoint.empty()) {
    spdlog::info("catching up on {}: entries without a webhook field are dead-lettered (no default_endpoint); "
                 "their count follows once the entries appended before start-up are read",
                 where_);
  }
  quiet_timer_.arm(quiet_);
}

void CatchUpCount::note(const StreamEntry& entry) {
  if (done_) return;
  if (auto ms = id_ms(entry.entry_id); ms && *ms >= start_ms_) {
    finish("reached the entries appended since start-up");
    return;
  }
  ++total_;
  const std::string& name = entry.field(kWebhookField);
  if (name.empty()) {
    ++without_field_;
  } else if (hooks_.endpoint_for(name) == nullptr) {
    ++unknown_;
  }
  quiet_timer_.arm(quiet_);
}

void CatchUpCount::quiet_tick() {
  if (done_) return;
  if (!idle_()) {
    quiet_timer_.arm(quiet_);  // still delivering, or not reading yet: not caught up
    return;
  }
  finish("the stream is read to its end");
}

void CatchUpCount::finish(const char* how) {
  done_ = true;
  quiet_timer_.cancel();
  const bool dead_letters = hooks_.default_endpoint.empty() && without_field_ > 0;
  const std::string fate = hooks_.default_endpoint.empty() ? "dead-lettered (no default_endpoint is configured)"
                                                            : "sent to default_endpoint " + hooks_.default_endpoint;
  const std::string line = "catch-up of " + where_ + " done (" + how + "): read the " + std::to_string(total_) +
                           " entries appended before start-up: " + std::to_string(without_field_) +
                           " without a webhook field, " + fate + "; " + std::to_string(unknown_) +
                           " naming an unknown endpoint, dead-lettered; " +
                           std::to_string(total_ - without_field_ - unknown_) + " for a configured endpoint";
  if (dead_letters || unknown_ > 0) {
    spdlog::warn("{}", line);
  } else {
    spdlog::info("{}", line);
  }
}

}  // namespace expiry
