// What every expiry-ctl command starts with: a client routed by slot (one Redis or a cluster,
// told apart by the server) and the namespace's layout, its bucket count agreed with NS:buckets.
#pragma once

#include "ctl/ctl_commands.h"
#include "ctl/ctl_layout.h"
#include "ctl/ctl_settings.h"
#include "io/sync/routed_client.h"

namespace expiry {

struct CtlSession {
  // Connects and agrees on the bucket count (RoutedClient::agree_buckets): a configured count
  // that contradicts NS:buckets throws ConfigError (exit 2) before anything else is sent.
  explicit CtlSession(const CtlTarget& target);

  RoutedClient redis;
  CtlLayout layout;
};

// schedule --wait-replicas: WAITs as `wait` says on every node written to (nothing when
// wait.replicas is 0) and returns kExitOk, or prints replica_shortfall_message on stderr and
// returns kExitNotReplicated.
int confirm_replicas(RoutedClient& redis, const ReplicaWait& wait);

// The Redis clock (TIME) of bucket 0's node, in ms (the nodes of a cluster share a host clock).
long long redis_now_ms(RoutedClient& redis);

}  // namespace expiry
