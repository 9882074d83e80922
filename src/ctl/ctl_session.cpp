// See ctl_session.h.
#include "ctl/ctl_session.h"

#include <chrono>
#include <iostream>

#include "ctl/replica_report.h"
#include "producer/producer_target.h"

namespace expiry {
namespace {

ReplicaConfirmation confirmation_of(const ReplicaWait& wait) {
  ReplicaConfirmation out;
  out.replicas = wait.replicas;
  out.automatic = wait.automatic;
  out.timeout = std::chrono::milliseconds(wait.timeout_ms);
  return out;
}

}  // namespace

CtlSession::CtlSession(const CtlTarget& target, const ReplicaWait& wait)
    : producer(ProducerTarget{target.redis, target.ns, target.buckets, target.stream}, confirmation_of(wait)),
      layout(producer.placement()) {}

int confirm_writes(CtlSession& session, const ReplicaWait& wait, const std::function<void()>& write_again) {
  const ReplicaAcks acks = session.producer.confirm_writes(write_again, [](const ReplicaAcks& shortfall) {
    std::cerr << "expiry-ctl: " << shortfall.acknowledged << " of " << shortfall.wanted << " replica"
              << (shortfall.wanted == 1 ? "" : "s")
              << " acknowledged the writes: the master may be failing over; writing again to the master the "
                 "sentinels name\n";
  });
  if (acks.wanted <= 0) return kExitOk;  // nothing to wait for (automatic: the sentinels see no healthy replica)
  if (acks.confirmed()) {
    if (!wait.automatic || acks.writes > 1) {
      std::cerr << "expiry-ctl: " << acks.acknowledged << " replica" << (acks.acknowledged == 1 ? "" : "s")
                << " acknowledged the writes\n";
    }
    return kExitOk;
  }
  std::cerr << "expiry-ctl: "
            << replica_shortfall_message(acks.wanted, acks.acknowledged, wait.timeout_ms, session.producer.cluster())
            << (acks.writes > 1 ? " (after " + std::to_string(acks.writes) + " writes)" : "") << "\n";
  return kExitNotReplicated;
}

}  // namespace expiry
