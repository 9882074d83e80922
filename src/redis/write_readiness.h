// WriteReadiness: whether a node takes our writes, judged from the replies to them, for the
// services' /readyz ("can forward", "can consume"). Pure: the callers feed it replies and ROLE.
#pragma once

#include <string>

#include "redis/reply.h"

namespace expiry {

// Contracts:
// - A refusal that says the node is not a writable master (READONLY, MASTERDOWN, NOREPLICAS,
//   OOM) makes it not ready at once; so does a ROLE other than "master".
// - Other failures (any error reply but the transient or cluster-moving kinds: LOADING, BUSY,
//   MOVED, ASK, TRYAGAIN, CLUSTERDOWN, migrating, and lost connections, which the connection's
//   own state reports) make it not ready after kFailuresInARow of them in a row.
// - Any success makes it ready again; ROLE "master" ends a refusal (a write still refused says
//   so again).
class WriteReadiness {
 public:
  static constexpr int kFailuresInARow = 3;

  void on_success();
  void on_failure(const Reply& reply, const std::string& what);
  void on_role(const std::string& role);
  // True when writes are taken; otherwise false with the reason in `why`.
  bool ready(std::string& why) const;
  // True while the node refused writes as a non-master (READONLY, MASTERDOWN, a ROLE).
  bool refuses_writes() const { return refused_; }

 private:
  bool refused_ = false;  // the node said it is not a writable master
  int failures_ = 0;      // other failures in a row
  std::string reason_;    // of the last failure or refusal
};

}  // namespace expiry
