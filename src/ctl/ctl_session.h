// What every expiry-ctl command starts with: a client routed by slot (one Redis or a cluster,
// told apart by the server) and the namespace's layout, its bucket count agreed with NS:buckets.
#pragma once

#include <functional>

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

// How many times confirm_writes writes in all, through Sentinel, before it gives up.
constexpr int kConfirmAttempts = 4;

// schedule's confirmation on replicas: WAITs as `wait` says on every node written to (nothing
// when it asks for 0 replicas) and returns kExitOk. Through Sentinel a shortfall means the write
// may have gone to a master being replaced (its promoted replica no longer acknowledges): the
// master is found again (a failover in progress is waited out) and `write_again` is called, which
// is safe because schedule replaces a task by id; at most kConfirmAttempts writes in all. Still
// short (or short without Sentinel): prints replica_shortfall_message on stderr and returns
// kExitNotReplicated.
int confirm_writes(RoutedClient& redis, const ReplicaWait& wait, const std::function<void()>& write_again);

// The Redis clock (TIME) of bucket 0's node, in ms (the nodes of a cluster share a host clock).
long long redis_now_ms(RoutedClient& redis);

}  // namespace expiry
