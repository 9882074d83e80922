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

int confirm_replicas(RoutedClient& redis, const ReplicaWait& wait) {
  if (wait.replicas <= 0) return kExitOk;
  const long long acknowledged = redis.wait_replicas(wait.replicas, std::chrono::milliseconds(wait.timeout_ms));
  if (acknowledged >= wait.replicas) {
    std::cerr << "expiry-ctl: " << acknowledged << " replica" << (acknowledged == 1 ? "" : "s")
              << " acknowledged the writes\n";
    return kExitOk;
  }
  std::cerr << "expiry-ctl: " << replica_shortfall_message(wait.replicas, acknowledged, wait.timeout_ms, redis.cluster())
            << "\n";
  return kExitNotReplicated;
}

long long redis_now_ms(RoutedClient& redis) {
  const Reply time = redis.command({"TIME"}, CtlLayout::slot_of_bucket(0));
  expect_ok(time, "TIME");
  const auto now = time_reply_ms(time);
  if (!now) throw ReplyError("TIME: unexpected reply " + time.describe());
  return *now;
}

}  // namespace expiry
