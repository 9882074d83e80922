// See cluster_topology.h.
#include "io/cluster_topology.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "redis/redis_error.h"

namespace expiry {

namespace {

// Two maps are the same when every range has the same slots, primary and replicas (in any order).
bool same_map(const SlotMap& a, const SlotMap& b) {
  const auto& ra = a.ranges();
  const auto& rb = b.ranges();
  if (ra.size() != rb.size()) return false;
  for (size_t i = 0; i < ra.size(); ++i) {
    if (ra[i].first != rb[i].first || ra[i].last != rb[i].last || ra[i].primary != rb[i].primary) return false;
    auto replicas_a = ra[i].replicas;
    auto replicas_b = rb[i].replicas;
    std::sort(replicas_a.begin(), replicas_a.end());
    std::sort(replicas_b.begin(), replicas_b.end());
    if (replicas_a != replicas_b) return false;
  }
  return true;
}

}  // namespace

RedisEndpoint endpoint_at(const RedisEndpoint& seed, const NodeAddress& addr) {
  RedisEndpoint ep = seed;
  ep.host = addr.host;
  ep.port = addr.port;
  return ep;
}

ClusterTopology::ClusterTopology(EventLoop& loop, Options options)
    : loop_(loop),
      options_(std::move(options)),
      node_{options_.seed.host, options_.seed.port},
      rng_(std::random_device{}()),
      ask_timer_(loop, [this] { ask(); }),
      refresh_timer_(loop, [this] {
        refresh_timer_.arm(options_.refresh_interval);
        refresh("periodic");
      }),
      switch_timer_(loop, [this] { switch_now(); }),
      connect_timer_(loop, [this] { connect_node(); }),
      node_deadline_(loop, [this] {
        if (conn_ && !conn_->ready()) {
          switch_node("not ready after " + std::to_string(options_.connect_timeout.count()) + " ms");
        }
      }),
      notify_timer_(loop, [this] {
        if (!closed_ && map_ && on_change_) on_change_(*map_);
      }) {}

ClusterTopology::~ClusterTopology() = default;

void ClusterTopology::start() {
  if (started_ || closed_) return;
  started_ = true;
  spdlog::info("cluster topology: following the slot map, starting at {}", node_.to_string());
  connect_node();
  refresh("start");
  refresh_timer_.arm(options_.refresh_interval);
}

void ClusterTopology::connect_node() {
  if (closed_) return;
  RedisConnection::Options o;
  o.endpoint = endpoint_at(options_.seed, node_);
  o.role = "topology";
  o.client_name = options_.client_name.empty() ? "" : options_.client_name + "-topology";
  o.connect_timeout = options_.connect_timeout;
  o.backoff = options_.backoff;
  conn_ = std::make_unique<RedisConnection>(loop_, o);
  const uint64_t generation = generation_;
  conn_->set_on_ready([this, generation] {
    if (generation != generation_) return;
    node_deadline_.cancel();
    if (want_) schedule_ask();
  });
  conn_->set_on_down([this, generation](const std::string& why) {
    if (generation == generation_) switch_node("connection lost: " + why);
  });
  conn_->start();
  node_deadline_.arm(options_.connect_timeout);
}

void ClusterTopology::refresh(const char* reason) {
  if (closed_ || !started_) return;
  if (!want_) reason_ = reason;
  want_ = true;
  schedule_ask();
}

void ClusterTopology::schedule_ask() {
  if (in_flight_ || ask_timer_.armed()) return;
  const auto next = last_ask_ + kMinRefreshGap;
  const auto now = Clock::now();
  ask_timer_.arm(next > now ? std::chrono::duration_cast<std::chrono::microseconds>(next - now)
                            : std::chrono::microseconds(0));
}

void ClusterTopology::ask() {
  if (closed_ || !want_ || in_flight_) return;
  if (!conn_ || !conn_->ready()) return;  // on_ready asks, or node_deadline_ moves on
  want_ = false;
  in_flight_ = true;
  last_ask_ = Clock::now();
  spdlog::debug("cluster topology: CLUSTER SLOTS to {} ({})", node_.to_string(), reason_);
  const uint64_t generation = generation_;
  conn_->command({"CLUSTER", "SLOTS"}, [this, generation](const Reply& r) { on_slots(generation, r); });
}

void ClusterTopology::on_slots(uint64_t generation, const Reply& reply) {
  if (generation != generation_ || closed_) return;
  in_flight_ = false;
  if (reply.failed()) {
    want_ = true;
    switch_node("CLUSTER SLOTS failed: " + reply.describe());
    return;
  }
  std::string error;
  auto map = SlotMap::from_cluster_slots(reply, node_.host, &error);
  if (!map) {
    want_ = true;
    switch_node(error);
    return;
  }
  if (!map->complete()) {
    want_ = true;
    if (auto dropped = incomplete_log_.allow(Clock::now())) {
      spdlog::warn("cluster topology: {} answered an incomplete slot map (cluster down or slots unassigned); "
                   "asking again ({} such lines not logged)",
                   node_.to_string(), *dropped);
    }
    switch_node("incomplete slot map");
    return;
  }
  misses_ = 0;
  rounds_ = 0;
  if (!map_ || !same_map(*map_, *map)) {
    const bool first = !map_;
    map_ = std::move(*map);
    ++maps_published_;
    spdlog::info("cluster topology: {} slot map from {}: {} ranges on {} primaries", first ? "first" : "new",
                 node_.to_string(), map_->ranges().size(), map_->primaries().size());
    notify_timer_.arm(std::chrono::microseconds(0));
  }
  if (want_) schedule_ask();
}

std::vector<NodeAddress> ClusterTopology::candidates() const {
  std::vector<NodeAddress> out{NodeAddress{options_.seed.host, options_.seed.port}};
  auto add = [&out](const NodeAddress& a) {
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  };
  if (map_) {
    for (const auto& p : map_->primaries()) {
      add(p);
      for (const auto& r : map_->replicas_of(p)) add(r);
    }
  }
  return out;
}

void ClusterTopology::switch_node(const std::string& why) {
  if (closed_) return;
  switch_why_ = why;
  switch_timer_.arm(std::chrono::microseconds(0));
}

void ClusterTopology::switch_now() {
  if (closed_) return;
  ++generation_;
  ++node_switches_;
  in_flight_ = false;
  want_ = true;
  node_deadline_.cancel();
  ask_timer_.cancel();
  conn_.reset();  // from a timer: not inside one of the connection's callbacks
  const auto nodes = candidates();
  auto at = std::find(nodes.begin(), nodes.end(), node_);
  const size_t next = at == nodes.end() ? 0 : (static_cast<size_t>(at - nodes.begin()) + 1) % nodes.size();
  const NodeAddress previous = node_;
  node_ = nodes[next];
  std::chrono::milliseconds delay{0};
  if (++misses_ >= nodes.size()) {
    misses_ = 0;
    delay = backoff_delay(options_.backoff, rounds_++, std::uniform_real_distribution<double>(0, 1)(rng_));
  }
  spdlog::warn("cluster topology: {} from {}; asking {} next{}", switch_why_, previous.to_string(),
               node_.to_string(), delay.count() > 0 ? " in " + std::to_string(delay.count()) + " ms" : "");
  if (delay.count() > 0) {
    connect_timer_.arm(delay);
  } else {
    connect_node();
  }
}

void ClusterTopology::close() {
  if (closed_) return;
  closed_ = true;
  ask_timer_.cancel();
  refresh_timer_.cancel();
  switch_timer_.cancel();
  connect_timer_.cancel();
  node_deadline_.cancel();
  notify_timer_.cancel();
  if (conn_) conn_->close();
}

}  // namespace expiry
