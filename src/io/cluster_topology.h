// Follows a Redis Cluster's slot map for the async services (relay, consumers): CLUSTER SLOTS
// over a connection of its own, refreshed periodically and on demand, moving on to another known
// node when the one it asks is unreachable, so a dead seed or a killed primary never leaves it
// stuck.
//
// Contracts:
// - Only a complete map (every slot has a primary) is published; an incomplete one (cluster
//   down, slots unassigned) is logged and asked again, from another node if one is known.
// - One CLUSTER SLOTS at a time: refresh() calls while one is in flight are coalesced into one
//   more ask after it, and asks are at least kMinRefreshGap apart.
// - on_change runs from the loop (a zero-delay timer), never from inside a hiredis callback.
//   It must not destroy the ClusterTopology.
// - Node order when asking fails: the seed, then every primary and replica of the last complete
//   map, round robin; after a whole round without an answer, the next attempt waits a backoff
//   delay (Options::backoff).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "io/event_loop.h"
#include "io/redis_connection.h"
#include "log/log_limiter.h"
#include "redis/cluster_slots.h"

namespace expiry {

class ClusterTopology {
 public:
  struct Options {
    RedisEndpoint seed;               // any node; credentials/db of it are reused for every node
    std::string client_name;          // CLIENT SETNAME prefix
    std::chrono::milliseconds connect_timeout{2000};
    BackoffPolicy backoff;
    std::chrono::milliseconds refresh_interval{5000};   // periodic refresh
  };

  // Least time between two CLUSTER SLOTS asks.
  static constexpr std::chrono::milliseconds kMinRefreshGap{100};

  ClusterTopology(EventLoop& loop, Options options);
  ~ClusterTopology();
  ClusterTopology(const ClusterTopology&) = delete;
  ClusterTopology& operator=(const ClusterTopology&) = delete;

  // Called (from the loop, never from inside a hiredis callback) with the new map whenever
  // CLUSTER SLOTS answers a complete map that differs from the previous one (and the first time).
  void set_on_change(std::function<void(const SlotMap&)> fn) { on_change_ = std::move(fn); }
  void start();
  // Asks for a refresh soon: coalesced (one CLUSTER SLOTS in flight), and rate-limited (not more
  // than one every kMinRefreshGap). Called by owners on MOVED, on a lost node connection, etc.
  void refresh(const char* reason);
  const SlotMap* map() const { return map_ ? &*map_ : nullptr; }
  // Stops asking and closes the connection; on_change is not called any more.
  void close();

  // The node currently asked (the seed before the first switch).
  const NodeAddress& asked_node() const { return node_; }
  uint64_t maps_published() const { return maps_published_; }
  uint64_t node_switches() const { return node_switches_; }

 private:
  void connect_node();
  void schedule_ask();
  void ask();
  void on_slots(uint64_t generation, const Reply& reply);
  // Moves on to the next known node (deferred: safe from reply callbacks).
  void switch_node(const std::string& why);
  void switch_now();
  std::vector<NodeAddress> candidates() const;

  EventLoop& loop_;
  Options options_;
  std::function<void(const SlotMap&)> on_change_;
  std::optional<SlotMap> map_;          // last complete map
  NodeAddress node_;                     // the node asked
  std::unique_ptr<RedisConnection> conn_;  // to node_; replaced (from a timer) on a switch
  uint64_t generation_ = 0;              // bumped on each switch: replies of older connections are ignored
  bool started_ = false;
  bool closed_ = false;
  bool want_ = false;                    // a refresh was asked for and not yet sent
  bool in_flight_ = false;               // a CLUSTER SLOTS is awaiting its reply
  std::string reason_;                   // why the pending refresh was asked for (logs)
  std::string switch_why_;               // why the pending switch was asked for (logs)
  Clock::time_point last_ask_{};         // when the last CLUSTER SLOTS was sent
  size_t misses_ = 0;                    // nodes that failed in a row since the last complete map
  uint32_t rounds_ = 0;                  // whole rounds of failed nodes, for backoff
  uint64_t maps_published_ = 0;
  uint64_t node_switches_ = 0;
  std::minstd_rand rng_;
  LogLimiter incomplete_log_{std::chrono::seconds(5)};
  Timer ask_timer_;                      // the next (rate-limited) ask
  Timer refresh_timer_;                  // periodic refresh
  Timer switch_timer_;                   // a switch to the next node, outside reply callbacks
  Timer connect_timer_;                  // connects to node_ after a backoff delay
  Timer node_deadline_;                  // a node not ready by connect_timeout is left for the next
  Timer notify_timer_;                   // runs on_change from the loop
};

// The endpoint of node `addr`, with the credentials and db of `seed`.
RedisEndpoint endpoint_at(const RedisEndpoint& seed, const NodeAddress& addr);

}  // namespace expiry
