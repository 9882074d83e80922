// See replica_confirmer.h.
#include "producer/replica_confirmer.h"

namespace expiry {

int ReplicaConfirmer::wanted(RoutedClient& redis) {
  if (!confirmation_.automatic) return confirmation_.replicas;
  const auto now = std::chrono::steady_clock::now();
  if (now >= counted_ + confirmation_.recount_after) {
    healthy_ = redis.sentinel_healthy_replicas().value_or(0);
    counted_ = now;
  }
  return healthy_;
}

ReplicaAcks ReplicaConfirmer::confirm(RoutedClient& redis, const std::function<void()>& write_again,
                                      const std::function<void(const ReplicaAcks&)>& on_shortfall) {
  for (int writes = 1;; ++writes) {
    ReplicaAcks acks;
    acks.writes = writes;
    acks.wanted = wanted(redis);
    // Nothing to wait for (automatic: the sentinels see no healthy replica).
    if (acks.wanted <= 0) return acks;
    acks.acknowledged = redis.wait_replicas(static_cast<int>(acks.wanted), confirmation_.timeout);
    if (acks.confirmed() || !redis.through_sentinel() || writes == kConfirmAttempts) return acks;
    if (on_shortfall) on_shortfall(acks);
    redis.rediscover_master("writes not acknowledged by the replicas");
    counted_ = {};  // the new master's replicas are counted again
    write_again();
  }
}

}  // namespace expiry
