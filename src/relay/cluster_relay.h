// expiry-relay on a Redis Cluster: follows the slot map (ClusterTopology) and runs one Relay per
// primary, each with the buckets whose slot that primary owns, its own command connection and
// keyevent subscriber (expired events are node-local). When ownership changes (failover,
// resharding), the Relays of the changed primaries are stopped and new ones started; every new
// Relay sweeps its buckets as soon as it connects, so a task whose event was lost in the
// handover is still forwarded. All node Relays share one set of counters and one /metrics.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/relay_config.h"
#include "io/cluster_topology.h"
#include "io/event_loop.h"
#include "relay/relay.h"
#include "relay/relay_stats.h"
#include "service/metrics.h"

namespace expiry {

// Which primary serves each of `bucket_count` buckets under `map`: buckets by "host:port".
std::map<std::string, std::vector<int>> buckets_by_primary(const SlotMap& map, int bucket_count);

class ClusterRelay {
 public:
  ClusterRelay(EventLoop& loop, RelayConfig config, int bucket_count);
  ClusterRelay(const ClusterRelay&) = delete;
  ClusterRelay& operator=(const ClusterRelay&) = delete;

  void start();
  // Graceful stop of every node Relay (see Relay::stop); `done` runs once all have stopped.
  void stop(std::function<void()> done);

  // The largest exit code of any node Relay (2 after a configuration problem).
  int exit_code() const;
  const Metrics& metrics() const { return metrics_; }
  // Ready: the slot map is known and every primary's Relay is ready.
  bool ready(std::string& why) const;
  // Healthy unless a slot map has been missing, or a primary's Relay unhealthy, for longer than
  // unhealthy_after.
  bool healthy(std::string& why) const;

 private:
  void on_topology(const SlotMap& map);
  std::unique_ptr<Relay> make_node_relay(const NodeAddress& node, std::vector<int> buckets);
  // Stops `relay` and destroys it once stopped (never from inside its own callbacks).
  void retire(std::unique_ptr<Relay> relay);
  void maybe_finish_stop();
  RelayConnections connections() const;

  EventLoop& loop_;
  const RelayConfig config_;
  const int bucket_count_;
  RelayStats stats_;
  Metrics metrics_;
  ClusterTopology topology_;
  std::map<std::string, std::unique_ptr<Relay>> nodes_;  // by the primary's "host:port"
  std::map<Relay*, std::unique_ptr<Relay>> retiring_;    // stopping; destroyed once stopped
  int retired_exit_code_ = 0;
  bool stopping_ = false;
  std::function<void()> on_stopped_;
  Clock::time_point started_at_;
  AliveToken alive_;
};

}  // namespace expiry
