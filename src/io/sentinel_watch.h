// SentinelWatch: the one subscription of a process (per event loop and Sentinel setup) to the
// sentinels' +switch-master, which moves every RedisConnection that reaches its Redis through
// those sentinels to the new master within milliseconds of the switch.
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "io/event_loop.h"
#include "io/sync/sentinel_discovery.h"
#include "protocol/reply.h"

namespace expiry {

class RedisConnection;

// Contracts:
// - join() returns the watch shared by every connection of `loop` with the same sentinel
//   settings, creating it (and its subscription) for the first; the last holder to let go
//   destroys it. A connection must leave() before it is destroyed.
// - The subscription goes to one sentinel at a time, the next one in the list after each failed
//   attempt or lost connection (reconnect with the followers' backoff).
// - Followers get follow_master(host, port) on a +switch-master naming their master, and after
//   every periodic check (kRecheck; blocking, at most the discovery timeout per sentinel) that
//   finds the sentinels naming another master than a follower uses: the pub/sub hint can be lost.
class SentinelWatch {
 public:
  static constexpr std::chrono::seconds kRecheck{5};

  // The subscription connects with `connect_timeout` and retries with `backoff`.
  static std::shared_ptr<SentinelWatch> join(EventLoop& loop, const RedisEndpoint& endpoint,
                                             std::chrono::milliseconds connect_timeout, const BackoffPolicy& backoff,
                                             RedisConnection* follower);
  void leave(RedisConnection* follower);

  SentinelWatch(EventLoop& loop, const RedisEndpoint& endpoint, std::chrono::milliseconds connect_timeout,
                const BackoffPolicy& backoff);
  ~SentinelWatch();
  SentinelWatch(const SentinelWatch&) = delete;
  SentinelWatch& operator=(const SentinelWatch&) = delete;

  uint64_t switches_seen() const { return switches_seen_; }

 private:
  void on_ready();
  void on_message(const Reply& message);
  void recheck();
  void tell_followers(const std::string& host, int port);

  EventLoop& loop_;
  RedisEndpoint endpoint_;
  SentinelDiscovery discovery_;   // for the periodic check
  size_t next_sentinel_ = 0;      // which sentinel the subscription tries next
  std::set<RedisConnection*> followers_;
  uint64_t switches_seen_ = 0;
  Timer recheck_timer_;
  std::unique_ptr<RedisConnection> subscription_;  // last: destroyed first
};

}  // namespace expiry
