// The Producer's confirmation of its writes on replicas (docs/reliability.md): WAIT after the
// writes, and through Sentinel, when fewer replicas acknowledged than asked, write again to the
// master the sentinels name (the writes may have gone to a master being replaced). Installed
// API: standard headers only.
#pragma once

#include <chrono>

namespace expiry {

// How many times Producer::confirm_writes writes in all, through Sentinel, before it gives up.
constexpr int kConfirmAttempts = 4;

struct ReplicaConfirmation {
  int replicas = 0;        // WAIT for this many replicas (on every node written to); 0: none
  bool automatic = false;  // through Sentinel: WAIT for as many replicas as the sentinels see healthy
  std::chrono::milliseconds timeout{1000};  // WAIT's timeout
  // automatic: how long the sentinels' count is reused before they are asked again (zero: asked
  // at every confirmation); a rewrite always asks again.
  std::chrono::milliseconds recount_after{0};
};

// The last WAIT of a confirmation: how many replicas it asked for and how many acknowledged
// (the fewest on any node written to), after `writes` writes in all.
struct ReplicaAcks {
  long long wanted = 0;  // 0: nothing to wait for (no replicas asked, or none the sentinels see)
  long long acknowledged = 0;
  int writes = 1;

  bool confirmed() const { return acknowledged >= wanted; }
};

}  // namespace expiry
