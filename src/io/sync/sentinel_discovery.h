// SentinelDiscovery: which node is the master now, as the sentinels say and the node confirms.
// Blocking (each step bounded by a short timeout; the sentinels are asked at once, each on its
// own thread); used by the sync clients when they connect, and off the event loop by
// io/sentinel_resolver for the asynchronous connections.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "config/redis_url.h"

namespace expiry {

// Every sentinel that answered knows no master of the configured name: a configuration error
// (the programs exit 2), not a fault to retry.
class UnknownMasterError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// A sentinel is failing the master over right now: the node it names may be about to be
// replaced, and writes to it may be discarded. Not a failure: ask again shortly.
class FailoverInProgressError : public IoError {
 public:
  using IoError::IoError;
};

// Contracts:
// - find_master() asks every sentinel at once for SENTINEL MASTER <name> (with the sentinel
//   password, and TLS when the URL is rediss://), waiting at most the timeout for each:
//   - if any sentinel reports a failover of the master in progress (its flag
//     failover_in_progress; only the sentinel running it knows), it throws
//     FailoverInProgressError: no program connects to a node the sentinels are failing over
//     away from;
//   - otherwise the address named with the highest config-epoch wins (right after a failover the
//     sentinels that have not yet heard of it still name the old master, which still answers
//     ROLE master for several seconds), and must answer ROLE "master" with the data
//     credentials and db (a ROLE refused by ACL, NOPERM, is taken as confirmed).
// - The sentinel that gave the answer is listed first from then on (the list is reordered).
// - Throws UnknownMasterError when at least one sentinel answered and none knows the name;
//   AuthError when every sentinel that answered refused the sentinel password (or wanted one),
//   or the master refuses the data credentials; IoError naming each sentinel's failure when no
//   master could be found and confirmed.
// - Each connect and command waits at most `timeout`.
// - Not thread-safe (one caller at a time).
class SentinelDiscovery {
 public:
  // `endpoint.sentinel` must be enabled; the rest of `endpoint` (user, password, db, tls) is
  // how the data nodes are reached.
  explicit SentinelDiscovery(const RedisEndpoint& endpoint,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(1000));

  // `endpoint` with the master's host and port (sentinel settings kept).
  RedisEndpoint find_master();

  // How many replicas of the master the sentinel that answered last sees healthy (for a WAIT
  // that confirms writes on a replica); nullopt when it cannot tell.
  std::optional<int> healthy_replicas();

  // The sentinel at `index` (the list reordered as above), as a data-less endpoint (the
  // sentinel password, TLS, db 0): for subscribing to its +switch-master.
  RedisEndpoint sentinel_endpoint(size_t index) const;
  size_t sentinel_count() const { return order_.size(); }

 private:
  RedisEndpoint endpoint_;
  std::chrono::milliseconds timeout_;
  std::vector<NodeAddress> order_;  // the sentinels, the last one that answered first
};

}  // namespace expiry
