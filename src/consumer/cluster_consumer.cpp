// See cluster_consumer.h.
#include "consumer/cluster_consumer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "functions/key_layout.h"
#include "redis/hash_slot.h"

namespace expiry {

namespace {

ClusterTopology::Options topology_options(const ConsumerConfig& c) {
  ClusterTopology::Options o;
  o.seed = c.redis;
  o.client_name = "expiry-consumer-" + c.consumer;
  o.connect_timeout = c.connect_timeout;
  o.backoff = c.reconnect;
  return o;
}

}  // namespace

ClusterConsumer::ClusterConsumer(EventLoop& loop, ConsumerShared& shared, int buckets)
    : loop_(loop),
      shared_(shared),
      buckets_(buckets),
      topology_(loop, topology_options(shared.config)),
      reap_timer_(loop, [this] { reap(); }) {
  shared_.on_cluster_change = [this](const char* why) { topology_.refresh(why); };
  topology_.set_on_change([this](const SlotMap& map) { on_map(map); });
}

void ClusterConsumer::start() {
  spdlog::info("consumer {} reading the {} bucket streams {}:{{0..{}}}:stream as group {}", shared_.config.consumer,
               buckets_, shared_.config.ns, buckets_ - 1, shared_.config.group);
  topology_.start();
}

void ClusterConsumer::on_map(const SlotMap& map) {
  if (stopping_) return;
  std::map<NodeAddress, std::vector<int>> wanted;
  for (int b = 0; b < buckets_; ++b) {
    if (const NodeAddress* primary = map.primary_of(bucket_slot(b))) wanted[*primary].push_back(b);
  }
  const auto buckets_of = [](const NodeConsumer& n) {
    std::vector<int> out;
    for (const auto& lane : n.lanes()) out.push_back(*lane.bucket);
    return out;
  };
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    auto w = wanted.find(it->first);
    if (w != wanted.end() && w->second == buckets_of(*it->second)) {
      ++it;
      continue;
    }
    retire(std::move(it->second), "its buckets moved");
    it = nodes_.erase(it);
  }
  const ConsumerConfig& c = shared_.config;
  for (auto& [node, buckets] : wanted) {
    if (nodes_.count(node) > 0) continue;
    std::vector<ConsumerLane> lanes;
    for (int b : buckets) {
      const KeyLayout keys(c.ns, b);
      lanes.push_back({GroupStream{keys.bucket_stream(), keys.bucket_dead_stream(), c.group, c.consumer}, b});
    }
    auto consumer = std::make_unique<NodeConsumer>(loop_, shared_, endpoint_at(c.redis, node), node.to_string(),
                                                   std::move(lanes), false);
    consumer->start();
    nodes_.emplace(node, std::move(consumer));
  }
  spdlog::info("consumer {}: {} workers, one per primary", c.consumer, nodes_.size());
}

void ClusterConsumer::retire(std::unique_ptr<NodeConsumer> node, const char* why) {
  spdlog::info("consumer {}: stopping the worker for {} ({})", shared_.config.consumer, node->name(), why);
  retiring_.push_back(std::make_unique<Retiring>(Retiring{std::move(node), false}));
  Retiring* r = retiring_.back().get();
  r->node->stop([this, r] {
    r->stopped = true;
    reap_timer_.arm(std::chrono::microseconds(0));
  });
}

// Destroys the retiring NodeConsumers that have stopped (never from inside their own callbacks:
// this runs from a timer).
void ClusterConsumer::reap() {
  retiring_.erase(std::remove_if(retiring_.begin(), retiring_.end(), [](const auto& r) { return r->stopped; }),
                  retiring_.end());
  maybe_finish_stop();
}

bool ClusterConsumer::ready(std::string& why) const {
  const SlotMap* map = topology_.map();
  if (stopping_ || map == nullptr || nodes_.empty()) {
    why = "the cluster's slot map is not known yet";
    return false;
  }
  size_t buckets = 0;
  for (const auto& [address, node] : nodes_) {
    if (!node->ready(why)) return false;
    buckets += node->lanes().size();
  }
  if (buckets != static_cast<size_t>(buckets_)) {
    why = "not every bucket has a worker yet";
    return false;
  }
  return true;
}

void ClusterConsumer::stop(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(done);
  topology_.close();
  for (auto& [address, node] : nodes_) retire(std::move(node), "stopping");
  nodes_.clear();
  reap_timer_.arm(std::chrono::microseconds(0));
}

void ClusterConsumer::maybe_finish_stop() {
  if (!stopping_ || !retiring_.empty() || !on_stopped_) return;
  auto done = std::move(on_stopped_);
  on_stopped_ = nullptr;
  done();
}

}  // namespace expiry
