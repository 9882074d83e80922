// What every expiry-ctl command starts with: a Producer (a client routed by slot over one Redis,
// a cluster or Sentinel, told apart by the server, and the namespace's placement, its bucket
// count agreed with NS:buckets), and the confirmation of schedule's writes on replicas.
#pragma once

#include <functional>

#include "ctl/ctl_commands.h"
#include "ctl/ctl_settings.h"
#include "producer/producer.h"
#include "producer/task_placement.h"

namespace expiry {

struct CtlSession {
  // Connects and agrees on the bucket count (RoutedClient::agree_buckets): a configured count
  // that contradicts NS:buckets throws ConfigError (exit 2) before anything else is sent.
  // `wait` is schedule's confirmation on replicas (confirm_writes).
  explicit CtlSession(const CtlTarget& target, const ReplicaWait& wait = {});

  Producer producer;
  const TaskPlacement& layout;   // producer.placement()
};

// schedule's confirmation on replicas (Producer::confirm_writes with the session's ReplicaWait):
// returns kExitOk when the replicas asked for acknowledged the writes, or when nothing was to be
// waited for; through Sentinel a shortfall calls `write_again` after saying so on stderr. Still
// short (or short without Sentinel): prints replica_shortfall_message on stderr and returns
// kExitNotReplicated.
int confirm_writes(CtlSession& session, const ReplicaWait& wait, const std::function<void()>& write_again);

}  // namespace expiry
