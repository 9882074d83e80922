// The stream consumer of a namespace on a Redis Cluster: every bucket b has its own stream
// NS:{b}:stream (and dead-letter stream NS:{b}:dead) in the bucket's slot, so the consumer
// follows the slot map (ClusterTopology) and runs one BucketWorker per primary, reading the
// streams of the buckets that primary serves (bucket_worker.h has the per-node contracts).
//
// When the map changes, a worker whose primary keeps exactly its buckets is kept; the others are
// stopped (what they read is handled, acked if their node still takes it) and replaced by
// workers for the new owners. An entry whose ack was lost that way stays pending and is
// reclaimed after min_idle, so handlers must be idempotent: nothing is lost, an entry may be
// handled twice.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/consumer_config.h"
#include "consumer/bucket_worker.h"
#include "io/cluster_topology.h"
#include "io/event_loop.h"

namespace expiry {

class ClusterConsumer {
 public:
  struct Options {
    int buckets = 64;             // the namespace's bucket count (NS:buckets)
    std::string handler_library;  // Lua source of a Function library the handler calls: loaded on every primary
  };

  ClusterConsumer(EventLoop& loop, const ConsumerConfig& config, Options options, BucketHandler handler);
  ClusterConsumer(const ClusterConsumer&) = delete;
  ClusterConsumer& operator=(const ClusterConsumer&) = delete;

  // Called when a node refuses AUTH/SELECT before any worker was ready (a configuration error:
  // the caller should exit non-zero); later refusals are logged and retried.
  void set_on_fatal(std::function<void(const std::string&)> fn) { shared_.on_fatal = std::move(fn); }

  void start();
  // Stops every worker (each handles and acks what it read), closes the topology, then `done`
  // runs from the loop.
  void stop(std::function<void()> done);

  // A complete map is known, every bucket has a worker, and every worker is ready.
  bool ready(std::string& why) const;
  const ConsumerStats& stats() const { return shared_.stats; }
  size_t workers() const { return workers_.size(); }
  ClusterTopology& topology() { return topology_; }

 private:
  void on_map(const SlotMap& map);
  void retire(std::unique_ptr<BucketWorker> worker, const char* why);
  void reap();
  void maybe_finish_stop();

  EventLoop& loop_;
  const ConsumerConfig& config_;
  const Options options_;
  ClusterTopology topology_;
  WorkerShared shared_;                                          // refers to topology_
  std::map<NodeAddress, std::unique_ptr<BucketWorker>> workers_;  // by primary
  struct Retiring {
    std::unique_ptr<BucketWorker> worker;
    bool stopped = false;  // its stop finished: reap() destroys it
  };
  std::vector<std::unique_ptr<Retiring>> retiring_;
  bool stopping_ = false;
  std::function<void()> on_stopped_;
  Timer reap_timer_;                                              // destroys stopped workers, outside their callbacks
};

}  // namespace expiry
