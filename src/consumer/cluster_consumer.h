// The consumer of a namespace on a Redis Cluster: every bucket b has its own stream
// NS:{b}:stream (and dead-letter stream NS:{b}:dead) in the bucket's slot, so the consumer
// follows the slot map (ClusterTopology) and runs one NodeConsumer per primary, reading the
// streams of the buckets that primary serves, the way ClusterRelay runs one Relay per primary
// (node_consumer.h has the per-node contracts).
//
// When the map changes, a NodeConsumer whose primary keeps exactly its buckets is kept; the
// others are stopped (what they read is handled, acked if their node still takes it) and
// replaced by NodeConsumers for the new owners. An entry whose ack was lost that way stays
// pending and is reclaimed after min_idle, so handlers must be idempotent: nothing is lost, an
// entry may be handled twice.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/consumer_config.h"
#include "consumer/node_consumer.h"
#include "io/cluster_topology.h"
#include "io/event_loop.h"

namespace expiry {

class ClusterConsumer {
 public:
  // `buckets`: the namespace's bucket count (NS:buckets). `shared` outlives this object; its
  // on_cluster_change is set to ask the topology for a refresh.
  ClusterConsumer(EventLoop& loop, ConsumerShared& shared, int buckets);
  ClusterConsumer(const ClusterConsumer&) = delete;
  ClusterConsumer& operator=(const ClusterConsumer&) = delete;

  void start();
  // Stops every NodeConsumer (each handles and acks what it read), closes the topology, then
  // `done` runs from the loop.
  void stop(std::function<void()> done);

  // A complete map is known, every bucket has a NodeConsumer, and every one is ready.
  bool ready(std::string& why) const;
  size_t workers() const { return nodes_.size(); }
  ClusterTopology& topology() { return topology_; }

 private:
  void on_map(const SlotMap& map);
  void retire(std::unique_ptr<NodeConsumer> node, const char* why);
  void reap();
  void maybe_finish_stop();

  EventLoop& loop_;
  ConsumerShared& shared_;
  const int buckets_;
  ClusterTopology topology_;
  std::map<NodeAddress, std::unique_ptr<NodeConsumer>> nodes_;  // by primary
  struct Retiring {
    std::unique_ptr<NodeConsumer> node;
    bool stopped = false;  // its stop finished: reap() destroys it
  };
  std::vector<std::unique_ptr<Retiring>> retiring_;
  bool stopping_ = false;
  std::function<void()> on_stopped_;
  Timer reap_timer_;  // destroys stopped NodeConsumers, outside their callbacks
};

}  // namespace expiry
