// SentinelWatch: the subscriptions of a process (per event loop and Sentinel setup) to what the
// sentinels announce about its master, and the one SentinelResolver its connections ask which
// node is the master. Together they keep every RedisConnection that reaches its Redis through
// those sentinels away from a master being replaced, and move it to the new one within
// milliseconds of the switch.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "io/event_loop.h"
#include "io/sentinel_resolver.h"
#include "redis/reply.h"

namespace expiry {

class RedisConnection;

// Contracts:
// - join() returns the watch shared by every connection of `loop` with the same sentinel
//   settings, creating it for the first; the last holder to let go destroys it. A connection
//   must leave() before it is destroyed.
// - lookup() asks the sentinels off the loop (SentinelResolver): every connection attempt does.
// - One subscription per sentinel (a sentinel publishes only what it does itself, and the one
//   that runs a failover may be any of them), each reconnecting on its own.
// - +try-failover for the master: every follower is held (hold(): disconnected, not reconnecting)
//   for at most kFailoverHold, so that nothing is written to a master whose replica is being
//   promoted (such writes are discarded when the old master rejoins as a replica). Only
//   -failover-abort-*, +switch-master (follow_master(new address)) or the end of kFailoverHold
//   release it; a connection attempt after that asks the sentinels, and waits while any of them
//   still reports the failover in progress.
// - Every kRecheck a lookup (off the loop) asks what the sentinels name, in case a message was
//   lost: a failover in progress holds the followers; another master moves those connected
//   elsewhere (check_master()). A recheck never releases a hold.
class SentinelWatch {
 public:
  static constexpr std::chrono::seconds kRecheck{5};
  static constexpr std::chrono::seconds kFailoverHold{10};

  // The subscriptions connect with `connect_timeout` and retry with `backoff`.
  static std::shared_ptr<SentinelWatch> join(EventLoop& loop, const RedisEndpoint& endpoint,
                                             std::chrono::milliseconds connect_timeout, const BackoffPolicy& backoff,
                                             RedisConnection* follower);
  void leave(RedisConnection* follower);

  // Asks the sentinels which node is the master; `done` runs on the loop unless `alive` died.
  void lookup(const AliveToken& alive, std::function<void(const MasterLookup&)> done);

  SentinelWatch(EventLoop& loop, const RedisEndpoint& endpoint, std::chrono::milliseconds connect_timeout,
                const BackoffPolicy& backoff);
  ~SentinelWatch();
  SentinelWatch(const SentinelWatch&) = delete;
  SentinelWatch& operator=(const SentinelWatch&) = delete;

 private:
  void on_message(const Reply& message);
  void recheck();
  void on_recheck(const MasterLookup& lookup);

  EventLoop& loop_;
  RedisEndpoint endpoint_;
  std::set<RedisConnection*> followers_;
  SentinelResolver resolver_;
  Timer recheck_timer_;
  std::vector<std::unique_ptr<RedisConnection>> subscriptions_;  // destroyed before the resolver
  AliveToken alive_;                                              // guards recheck callbacks
};

}  // namespace expiry
