// Tops up the next instants of one bucket's recurring schedules (src/lua/expiry/occurrences.lua).
// A pass reads the schedules waiting (expiry_v2_recur_refills), computes their instants in C++
// (refill_instants: Lua has no time zones) and writes them (expiry_v2_recur_refill), which also
// arms an occurrence for a schedule that has none. Passes run when the bucket's wake channel
// says "recur", after every (re)connect, and every kRecurCheckPeriod in case a message was lost.
// Idempotent: relays racing over one schedule add each instant once (the library appends only
// instants after the schedule's horizon, for its current version).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "functions/key_layout.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "redis/reply.h"
#include "relay/relay_stats.h"

namespace expiry {

class RecurRefiller {
 public:
  static constexpr std::chrono::seconds kRecurCheckPeriod{30};
  // Schedules read per expiry_v2_recur_refills call.
  static constexpr int kRefillBatch = 100;

  RecurRefiller(EventLoop& loop, FunctionCaller& functions, KeyLayout keys, std::optional<int> db, RelayStats& stats);
  RecurRefiller(const RecurRefiller&) = delete;
  RecurRefiller& operator=(const RecurRefiller&) = delete;

  // Runs a pass as soon as possible; requests during a pass coalesce into one more.
  void request();
  // Starts the periodic pass (and runs one now).
  void start();
  // No new calls; calls in flight complete.
  void stop();
  bool busy() const { return in_flight_ > 0; }

 private:
  void pass();
  void on_refills(const Reply& reply);
  void call_done();

  EventLoop& loop_;
  FunctionCaller& functions_;
  const KeyLayout keys_;
  const std::optional<int> db_;
  RelayStats& stats_;
  Timer soon_;
  Timer periodic_;
  int in_flight_ = 0;
  bool again_ = false;
  bool stopped_ = false;
};

}  // namespace expiry
