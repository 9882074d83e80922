// The reconciliation sweep of one bucket: forwards every due task in the bucket's schedule ZSET
// in bounded batches (expiry_sweep) into the bucket's stream, and keeps one timer armed for the
// bucket's earliest due task, capped by the sweep period. It is the on-time path; events are only a hint. While a backlog drains it keeps
// sweep_pipeline calls in flight, so Redis never waits for this process between batches;
// each call is atomic and claims different tasks, so that never forwards a task twice.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "config/relay_config.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "redis/write_readiness.h"
#include "relay/relay_stats.h"

namespace expiry {

class Sweeper {
 public:
  // `keys` names the bucket; `stream` is where its tasks go (its own or the namespace's);
  // `limits` the lateness limit and dead-letter stream its claims and sweeps send.
  Sweeper(EventLoop& loop, FunctionCaller& functions, const RelayConfig& config, KeyLayout keys, std::string stream,
          ClaimLimits limits, RelayStats& stats);
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;

  // Sweeps as soon as possible; calls made while sweeps are in flight coalesce into one more.
  void sweep_now(const char* reason);
  // A task is due at `due_ms` on the Redis clock: make sure a sweep runs by then.
  void note_due(long long due_ms);
  // Called when Redis answered MOVED: this node no longer owns the bucket's slot.
  void set_on_moved(std::function<void()> fn) { on_moved_ = std::move(fn); }
  // Told of every sweep call's outcome (the relay's readiness: can it forward?).
  void set_readiness(WriteReadiness* readiness) { readiness_ = readiness; }
  const KeyLayout& keys() const { return keys_; }
  const std::string& stream() const { return stream_; }
  const ClaimLimits& limits() const { return limits_; }
  // Stops the timer; in-flight sweep calls still complete, but start no other.
  void stop();
  bool busy() const { return in_flight_ > 0; }
  // True from a reply that said more tasks were due until the reply that says none are (or a
  // failed call), including the moments between a reply and the next call: every task due now
  // will be claimed by this drain (or by the sweep after a reconnect), so an expired event
  // needs no claim of its own.
  bool draining() const { return draining_; }

 private:
  void run_batch();
  // Tops the in-flight calls up to sweep_pipeline (a backlog is draining).
  void fill_pipeline();
  void on_batch_reply(const Reply& reply, Clock::time_point sent_at);
  // A failed sweep call: when to try again depends on why (a slot moving, a redirect, an error).
  void on_batch_error(const Reply& reply);
  // Arms the timer for `delay` unless it already fires sooner.
  void arm_within(std::chrono::microseconds delay);

  EventLoop& loop_;
  FunctionCaller& functions_;
  const RelayConfig& config_;
  const KeyLayout keys_;
  const std::string stream_;
  const ClaimLimits limits_;
  RelayStats& stats_;
  std::function<void()> on_moved_;
  WriteReadiness* readiness_ = nullptr;  // the relay's, told of each call's outcome
  Timer timer_;
  AliveToken alive_;             // guards the work this sweeper defers to the loop
  int in_flight_ = 0;            // sweep calls waiting for their replies
  bool again_ = false;           // another sweep was asked for meanwhile
  bool draining_ = false;        // the last sweep reply said more tasks were due
  bool stopped_ = false;
  long long server_now_us_ = 0;  // Redis TIME (µs) at the last sweep reply
  Clock::time_point server_now_seen_at_;
};

}  // namespace expiry
