// SentinelWatch: the subscriptions of a process (per event loop and Sentinel setup) to what the
// sentinels announce about its master, which keep every RedisConnection that reaches its Redis
// through those sentinels away from a master being replaced and move it to the new one within
// milliseconds of the switch.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "io/event_loop.h"
#include "io/sync/sentinel_discovery.h"
#include "protocol/reply.h"

namespace expiry {

class RedisConnection;

// Contracts:
// - join() returns the watch shared by every connection of `loop` with the same sentinel
//   settings, creating it for the first; the last holder to let go destroys it. A connection
//   must leave() before it is destroyed.
// - One subscription per sentinel (a sentinel publishes only what it does itself, and the one
//   that runs a failover may be any of them), each reconnecting on its own.
// - +try-failover for the master: every follower is held (hold(): disconnected, not reconnecting)
//   for at most kFailoverHold, so that nothing is written to a master whose replica is being
//   promoted (such writes are discarded when the old master rejoins as a replica).
//   -failover-abort-*: released. +switch-master: follow_master(new address), which releases.
// - Every kRecheck a blocking check (at most the discovery timeout per sentinel) asks what the
//   sentinels name and tells the followers, in case a message was lost.
class SentinelWatch {
 public:
  static constexpr std::chrono::seconds kRecheck{5};
  static constexpr std::chrono::seconds kFailoverHold{10};

  // The subscriptions connect with `connect_timeout` and retry with `backoff`.
  static std::shared_ptr<SentinelWatch> join(EventLoop& loop, const RedisEndpoint& endpoint,
                                             std::chrono::milliseconds connect_timeout, const BackoffPolicy& backoff,
                                             RedisConnection* follower);
  void leave(RedisConnection* follower);

  SentinelWatch(EventLoop& loop, const RedisEndpoint& endpoint, std::chrono::milliseconds connect_timeout,
                const BackoffPolicy& backoff);
  ~SentinelWatch();
  SentinelWatch(const SentinelWatch&) = delete;
  SentinelWatch& operator=(const SentinelWatch&) = delete;

 private:
  void on_message(const Reply& message);
  void recheck();

  EventLoop& loop_;
  RedisEndpoint endpoint_;
  SentinelDiscovery discovery_;  // for the periodic check
  std::set<RedisConnection*> followers_;
  Timer recheck_timer_;
  std::vector<std::unique_ptr<RedisConnection>> subscriptions_;  // last: destroyed first
};

}  // namespace expiry
