// SentinelResolver: asks the sentinels which node is the master (io/sync/sentinel_discovery)
// on a thread of its own, so that no event loop ever waits on a sentinel: one that is frozen or
// never answers costs the loop nothing, and a healthy master connection is never dropped for it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/redis_url.h"
#include "io/event_loop.h"
#include "io/loop_mailbox.h"
#include "io/sync/sentinel_discovery.h"

namespace expiry {

// What the sentinels said, as SentinelDiscovery::find_master found it.
struct MasterLookup {
  enum class Outcome {
    Found,               // `master`: the node the sentinels name, confirmed by ROLE
    FailoverInProgress,  // a sentinel is failing the master over: connect to nothing yet
    Refused,             // a configuration error retrying cannot cure (unknown master name, credentials)
    Failed,              // the sentinels or the master cannot be reached now: retry with backoff
  };
  Outcome outcome = Outcome::Failed;
  RedisEndpoint master;
  std::string why;  // every outcome but Found
};

// Contracts:
// - lookup() may be called from the loop's thread only; `done` runs later on the loop, once,
//   unless `alive` has died by then (or the resolver is destroyed first).
// - Lookups asked while one runs are answered by the next run (never by an answer that was
//   already being computed when they were asked); all the lookups waiting when a run starts
//   share its answer.
// - The destructor waits for a run in progress (bounded by SentinelDiscovery's timeouts).
class SentinelResolver {
 public:
  SentinelResolver(EventLoop& loop, const RedisEndpoint& endpoint, std::chrono::milliseconds timeout);
  ~SentinelResolver();
  SentinelResolver(const SentinelResolver&) = delete;
  SentinelResolver& operator=(const SentinelResolver&) = delete;

  void lookup(const AliveToken& alive, std::function<void(const MasterLookup&)> done);

 private:
  struct Waiter {
    std::weak_ptr<void> alive;
    std::function<void(const MasterLookup&)> done;
  };
  void work();
  MasterLookup run_discovery();

  LoopMailbox mailbox_;
  SentinelDiscovery discovery_;  // used by the worker thread only
  std::mutex mutex_;             // guards waiting_ and stopping_
  std::condition_variable wake_;
  std::vector<Waiter> waiting_;
  bool stopping_ = false;
  std::thread worker_;  // last: started once everything above exists
};

}  // namespace expiry
