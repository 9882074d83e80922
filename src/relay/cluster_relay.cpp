// See cluster_relay.h.
#include "relay/cluster_relay.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "redis/hash_slot.h"

namespace expiry {

std::map<std::string, std::vector<int>> buckets_by_primary(const SlotMap& map, int bucket_count) {
  std::map<std::string, std::vector<int>> out;
  for (int b = 0; b < bucket_count; ++b) {
    if (const NodeAddress* primary = map.primary_of(bucket_slot(b))) out[primary->to_string()].push_back(b);
  }
  return out;
}

ClusterRelay::ClusterRelay(EventLoop& loop, RelayConfig config, int bucket_count)
    : loop_(loop),
      config_(std::move(config)),
      bucket_count_(bucket_count),
      topology_(loop, ClusterTopology::Options{config_.redis, "expiry-relay-topology-" + config_.instance,
                                               config_.connect_timeout, config_.reconnect}) {
  topology_.set_on_change([this](const SlotMap& map) { on_topology(map); });
  BucketScope every_bucket = BucketScope::all(bucket_count_);
  every_bucket.cluster = true;
  register_relay_metrics(metrics_, stats_, [this] { return connections(); }, relay_streams(config_, every_bucket));
  register_probe_metrics(metrics_, [this](std::string& why) { return ready(why); },
                         [this](std::string& why) { return healthy(why); });
}

RelayConnections ClusterRelay::connections() const {
  RelayConnections all;
  for (const auto& [address, relay] : nodes_) {
    RelayConnections one = relay->connections();
    all.commands.insert(all.commands.end(), one.commands.begin(), one.commands.end());
    all.subscribers.insert(all.subscribers.end(), one.subscribers.begin(), one.subscribers.end());
    all.functions.insert(all.functions.end(), one.functions.begin(), one.functions.end());
  }
  return all;
}

void ClusterRelay::start() {
  started_at_ = Clock::now();
  spdlog::info("expiry-relay {} starting on a Redis Cluster: seed={} namespace={} buckets={} group={}",
               config_.instance, config_.redis.where(), config_.ns, bucket_count_, config_.group);
  if (!config_.trim_streams.empty()) {
    spdlog::warn("trim_streams is ignored on a Redis Cluster: the relay trims its bucket streams only");
  }
  topology_.start();
}

std::unique_ptr<Relay> ClusterRelay::make_node_relay(const NodeAddress& node, std::vector<int> buckets) {
  RelayConfig node_config = config_;
  node_config.redis = endpoint_at(config_.redis, node);
  // The health channel and client names must be unique per node: the probe is published on
  // the subscriber's own node.
  node_config.instance = config_.instance + "@" + node.to_string();
  BucketScope scope;
  scope.bucket_count = bucket_count_;
  scope.cluster = true;
  scope.buckets = std::move(buckets);
  auto relay = std::make_unique<Relay>(loop_, std::move(node_config), std::move(scope), &stats_);
  relay->set_on_topology_hint([this](const char* why) { topology_.refresh(why); });
  return relay;
}

void ClusterRelay::on_topology(const SlotMap& map) {
  if (stopping_) return;
  auto wanted = buckets_by_primary(map, bucket_count_);
  // Relays of nodes that are no longer primaries, or whose buckets changed, stop.
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    auto w = wanted.find(it->first);
    if (w != wanted.end() && w->second == it->second->scope().buckets) {
      ++it;
      continue;
    }
    spdlog::info("cluster: {} {}; stopping its relay", it->first,
                 w == wanted.end() ? "serves no bucket now" : "serves other buckets now");
    retire(std::move(it->second));
    it = nodes_.erase(it);
  }
  for (auto& [address, buckets] : wanted) {
    if (nodes_.count(address) != 0) continue;
    std::optional<NodeAddress> node;
    for (const auto& primary : map.primaries()) {
      if (primary.to_string() == address) node = primary;
    }
    if (!node) continue;
    spdlog::info("cluster: starting the relay of primary {} ({} buckets)", address, buckets.size());
    auto relay = make_node_relay(*node, buckets);
    relay->start();
    nodes_.emplace(address, std::move(relay));
  }
  // Gauges of buckets no node serves any more would linger: keep only the served ones.
  for (auto it = stats_.schedules.begin(); it != stats_.schedules.end();) {
    it = it->first < bucket_count_ ? std::next(it) : stats_.schedules.erase(it);
  }
}

void ClusterRelay::retire(std::unique_ptr<Relay> relay) {
  Relay* raw = relay.get();
  retiring_.emplace(raw, std::move(relay));
  raw->stop(
      [this, raw] {
        // Called from the relay's connection's on_closed: destroy it from the loop, later.
        loop_.defer(alive_, [this, raw] {
          auto it = retiring_.find(raw);
          if (it == retiring_.end()) return;
          retired_exit_code_ = std::max(retired_exit_code_, it->second->exit_code());
          retiring_.erase(it);
          maybe_finish_stop();
        });
      },
      std::chrono::milliseconds(2000));
}

void ClusterRelay::stop(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(done);
  spdlog::info("stopping the relays of {} primaries", nodes_.size());
  topology_.close();
  auto nodes = std::move(nodes_);
  nodes_.clear();
  for (auto& [address, relay] : nodes) retire(std::move(relay));
  maybe_finish_stop();
}

void ClusterRelay::maybe_finish_stop() {
  if (!stopping_ || !retiring_.empty() || !on_stopped_) return;
  spdlog::info("stopped: {}", stats_.summary());
  auto done = std::move(on_stopped_);
  on_stopped_ = nullptr;
  done();
}

int ClusterRelay::exit_code() const {
  int code = retired_exit_code_;
  for (const auto& [address, relay] : nodes_) code = std::max(code, relay->exit_code());
  for (const auto& [raw, relay] : retiring_) code = std::max(code, relay->exit_code());
  return code;
}

bool ClusterRelay::ready(std::string& why) const {
  if (stopping_) {
    why = "stopping";
    return false;
  }
  if (topology_.map() == nullptr) {
    why = "no complete slot map yet (CLUSTER SLOTS)";
    return false;
  }
  if (nodes_.empty()) {
    why = "no primary serves a bucket";
    return false;
  }
  for (const auto& [address, relay] : nodes_) {
    std::string node_why;
    if (!relay->ready(node_why)) {
      why = "primary " + address + ": " + node_why;
      return false;
    }
  }
  return true;
}

bool ClusterRelay::healthy(std::string& why) const {
  if (topology_.map() == nullptr && config_.unhealthy_after.count() != 0 &&
      Clock::now() - started_at_ > config_.unhealthy_after) {
    why = "no complete slot map for longer than unhealthy_after_ms";
    return false;
  }
  for (const auto& [address, relay] : nodes_) {
    std::string node_why;
    if (!relay->healthy(node_why)) {
      why = "primary " + address + ": " + node_why;
      return false;
    }
  }
  return true;
}

}  // namespace expiry
