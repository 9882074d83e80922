// See ctl_session.h.
#include "ctl/ctl_session.h"

#include <chrono>
#include <iostream>

#include "ctl/redis_values.h"
#include "protocol/errors.h"

namespace expiry {

CtlSession::CtlSession(const CtlTarget& target) : redis(target.redis) {
  layout.ns = target.ns;
  layout.cluster = redis.cluster();
  layout.stream = target.stream;
  layout.db = layout.cluster ? 0 : target.redis.db;
  layout.buckets = redis.agree_buckets(target.ns, target.buckets);
}

int confirm_writes(RoutedClient& redis, const ReplicaWait& wait, const std::function<void()>& write_again) {
  for (int attempt = 1;; ++attempt) {
    int wanted = wait.replicas;
    if (wait.automatic) wanted = redis.sentinel_healthy_replicas().value_or(0);
    if (wanted <= 0) return kExitOk;  // nothing to wait for (automatic: the sentinels see no healthy replica)
    const long long acknowledged = redis.wait_replicas(wanted, std::chrono::milliseconds(wait.timeout_ms));
    if (acknowledged >= wanted) {
      if (!wait.automatic || attempt > 1) {
        std::cerr << "expiry-ctl: " << acknowledged << " replica" << (acknowledged == 1 ? "" : "s")
                  << " acknowledged the writes\n";
      }
      return kExitOk;
    }
    if (!redis.through_sentinel() || attempt == kConfirmAttempts) {
      std::cerr << "expiry-ctl: " << replica_shortfall_message(wanted, acknowledged, wait.timeout_ms, redis.cluster())
                << (attempt > 1 ? " (after " + std::to_string(attempt) + " writes)" : "") << "\n";
      return kExitNotReplicated;
    }
    std::cerr << "expiry-ctl: " << acknowledged << " of " << wanted << " replica" << (wanted == 1 ? "" : "s")
              << " acknowledged the writes: the master may be failing over; writing again to the master the "
                 "sentinels name\n";
    redis.rediscover_master("writes not acknowledged by the replicas");
    write_again();
  }
}

long long redis_now_ms(RoutedClient& redis) {
  const Reply time = redis.command({"TIME"}, CtlLayout::slot_of_bucket(0));
  expect_ok(time, "TIME");
  const auto now = time_reply_ms(time);
  if (!now) throw ReplyError("TIME: unexpected reply " + time.describe());
  return *now;
}

}  // namespace expiry
