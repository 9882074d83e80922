// SentinelDiscovery: which node is the master now, as the sentinels say and the node confirms.
// Blocking (each step bounded by a short timeout); used when a connection is made, by the sync
// clients and by io/redis_connection before each (re)connect.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "config/redis_url.h"
#include "protocol/errors.h"

namespace expiry {

// Every sentinel that answered knows no master of the configured name: a configuration error
// (the programs exit 2), not a fault to retry.
class UnknownMasterError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// Contracts:
// - find_master() asks the sentinels in turn: SENTINEL GET-MASTER-ADDR-BY-NAME on each (with
//   the sentinel password, and TLS when the URL is rediss://), then ROLE on the node it names,
//   with the data credentials and db. The first node that answers ROLE "master" wins; a node
//   that answers another role (a restarted old master the sentinels have not yet turned into a
//   replica says "master" too, but it is not named by them) is skipped for the next sentinel.
//   A ROLE refused by ACL (NOPERM) is taken as confirmed.
// - The sentinel that gave the answer is asked first next time (the list is reordered).
// - Throws UnknownMasterError when at least one sentinel answered and none knows the name;
//   IoError naming each sentinel's failure when no master could be found and confirmed.
// - Each connect and command waits at most `timeout`.
// - Not thread-safe.
class SentinelDiscovery {
 public:
  // `endpoint.sentinel` must be enabled; the rest of `endpoint` (user, password, db, tls) is
  // how the data nodes are reached.
  explicit SentinelDiscovery(const RedisEndpoint& endpoint,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(1000));

  // `endpoint` with the master's host and port (sentinel settings kept).
  RedisEndpoint find_master();

  // What the sentinels name as master now, without asking the node: the first answer in list
  // order; nullopt when none answers with an address.
  std::optional<NodeAddress> named_master();

  // The sentinel at the head of the list (the last one that answered), as a data-less endpoint
  // (the sentinel password, TLS, db 0): for subscribing to its +switch-master.
  RedisEndpoint sentinel_endpoint(size_t index) const;
  size_t sentinel_count() const { return order_.size(); }

 private:
  RedisEndpoint endpoint_;
  std::chrono::milliseconds timeout_;
  std::vector<NodeAddress> order_;  // the sentinels, the last one that answered first
};

}  // namespace expiry
