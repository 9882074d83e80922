// expiry-webhook's bounded graceful stop. SIGTERM/SIGINT stop the consumer's reads and let what
// it holds settle before the loop ends (consumer/consumer_program.h); a slow or silent endpoint
// would make that wait as long as its timeouts and retries, and the queue behind them, take.
// DrainDeadline, started by the same signal, bounds it: after `timeout` it logs how many entries
// were still held (requests in flight, entries queued behind them) and stops the loop. Those
// entries were never acknowledged, so they stay pending in the consumer group, where another
// member of the group (or this one, restarted) reclaims them after --min-idle-ms: nothing is lost,
// and an endpoint may see a request twice (delivery is at least once; webhook-id is kept).
//
// Contracts: start() arms the deadline once (a second signal changes nothing); a drain that
// finishes first ends the loop itself and the deadline dies with this object, uncalled.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "io/event_loop.h"

namespace expiry {

class DrainDeadline {
 public:
  struct Held {
    size_t entries = 0;    // answered to nobody yet: in flight or queued
    size_t in_flight = 0;  // requests out
  };
  using CountHeld = std::function<Held()>;

  // `where`: how the exit line names the group ("group workers of expiry:stream").
  DrainDeadline(EventLoop& loop, std::chrono::milliseconds timeout, CountHeld held, std::string where);
  DrainDeadline(const DrainDeadline&) = delete;
  DrainDeadline& operator=(const DrainDeadline&) = delete;

  // On the stop signal: arms the deadline (0: the loop stops on the next turn).
  void start();
  // After the run: logs how the drain ended when it ended in time (the deadline logs its own line).
  void report() const;

 private:
  void expire();

  EventLoop& loop_;
  const std::chrono::milliseconds timeout_;
  CountHeld held_;
  const std::string where_;
  bool started_ = false;
  bool expired_ = false;
  std::chrono::steady_clock::time_point started_at_{};
  Timer timer_;
};

}  // namespace expiry
