// Event path: claims one task per expired trigger key and forwards it into the stream
// (expiry_claim), with a bound on claims in flight.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "config/relay_config.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "io/function_caller.h"
#include "relay/relay_stats.h"

namespace expiry {

class EventClaimer {
 public:
  EventClaimer(FunctionCaller& functions, const RelayConfig& config, RelayStats& stats);
  EventClaimer(const EventClaimer&) = delete;
  EventClaimer& operator=(const EventClaimer&) = delete;

  // Called with the task's bucket when a claim could not settle the task and the bucket's
  // sweep must look (errors, overflow, a slot moving).
  void set_on_needs_sweep(std::function<void(int bucket)> fn) { on_needs_sweep_ = std::move(fn); }
  // Called with the bucket and Redis-clock due time of a task that is pending but not yet due.
  void set_on_not_due(std::function<void(int bucket, long long due_ms)> fn) { on_not_due_ = std::move(fn); }
  // Called when Redis answered MOVED: this node no longer owns the task's slot.
  void set_on_moved(std::function<void()> fn) { on_moved_ = std::move(fn); }

  // Claims task `id` of the bucket `keys` names into `stream` (fire-and-forget), or into the
  // dead letters when it is later than `limits` allow. Over the in-flight bound it counts the
  // event as deferred and asks for a sweep instead, so a burst never grows an unbounded queue.
  // A paused bucket's claim does nothing: the sweep after the resume forwards the task.
  void fire(const KeyLayout& keys, const std::string& stream, const ClaimLimits& limits, std::string_view id);

  size_t inflight() const { return inflight_; }

 private:
  FunctionCaller& functions_;
  const RelayConfig& config_;
  RelayStats& stats_;
  size_t inflight_ = 0;
  std::function<void(int)> on_needs_sweep_;
  std::function<void(int, long long)> on_not_due_;
  std::function<void()> on_moved_;
};

}  // namespace expiry
