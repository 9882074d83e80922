// The one implementation of the confirmation of writes on replicas (replica_confirmation.h),
// for expiry-ctl schedule (--wait-replicas, and through Sentinel by default) and order-sim.
#pragma once

#include <chrono>
#include <functional>

#include "io/sync/routed_client.h"
#include "producer/replica_confirmation.h"

namespace expiry {

class ReplicaConfirmer {
 public:
  explicit ReplicaConfirmer(const ReplicaConfirmation& confirmation) : confirmation_(confirmation) {}

  // Producer::confirm_writes's contract, on `redis`.
  ReplicaAcks confirm(RoutedClient& redis, const std::function<void()>& write_again,
                      const std::function<void(const ReplicaAcks&)>& on_shortfall);

 private:
  // The replicas to WAIT for: the configured count, or the sentinels' healthy count (asked
  // again once recount_after has passed since the last answer).
  int wanted(RoutedClient& redis);

  ReplicaConfirmation confirmation_;
  int healthy_ = 0;                                  // automatic: what the sentinels said last
  std::chrono::steady_clock::time_point counted_{};  // when they were asked (epoch: never)
};

}  // namespace expiry
