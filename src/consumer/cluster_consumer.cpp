// See cluster_consumer.h.
#include "consumer/cluster_consumer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "protocol/hash_slot.h"

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

ClusterConsumer::ClusterConsumer(EventLoop& loop, const ConsumerConfig& config, Options options,
                                 BucketHandler handler)
    : loop_(loop),
      config_(config),
      options_(std::move(options)),
      topology_(loop, topology_options(config)),
      shared_{config, topology_, std::move(handler), options_.handler_library,
              std::vector<WorkerShared::BucketMemory>(static_cast<size_t>(options_.buckets)), {}, nullptr, false},
      reap_timer_(loop, [this] { reap(); }) {
  topology_.set_on_change([this](const SlotMap& map) { on_map(map); });
}

void ClusterConsumer::start() {
  spdlog::info("consumer {} reading the {} bucket streams {}:{{0..{}}}:stream as group {}", config_.consumer,
               options_.buckets, config_.ns, options_.buckets - 1, config_.group);
  topology_.start();
}

void ClusterConsumer::on_map(const SlotMap& map) {
  if (stopping_) return;
  std::map<NodeAddress, std::vector<int>> wanted;
  for (int b = 0; b < options_.buckets; ++b) {
    if (const NodeAddress* primary = map.primary_of(bucket_slot(b))) wanted[*primary].push_back(b);
  }
  for (auto it = workers_.begin(); it != workers_.end();) {
    auto w = wanted.find(it->first);
    if (w != wanted.end() && w->second == it->second->buckets()) {
      ++it;
      continue;
    }
    retire(std::move(it->second), "its buckets moved");
    it = workers_.erase(it);
  }
  for (auto& [node, buckets] : wanted) {
    if (workers_.count(node) > 0) continue;
    auto worker = std::make_unique<BucketWorker>(loop_, shared_, node, buckets);
    worker->start();
    workers_.emplace(node, std::move(worker));
  }
  spdlog::info("consumer {}: {} workers, one per primary", config_.consumer, workers_.size());
}

void ClusterConsumer::retire(std::unique_ptr<BucketWorker> worker, const char* why) {
  spdlog::info("consumer {}: stopping the worker for {} ({})", config_.consumer, worker->node().to_string(), why);
  retiring_.push_back(std::make_unique<Retiring>(Retiring{std::move(worker), false}));
  Retiring* r = retiring_.back().get();
  r->worker->stop([this, r] {
    r->stopped = true;
    reap_timer_.arm(std::chrono::microseconds(0));
  });
}

// Destroys the retiring workers that have stopped (never from inside a worker's own callbacks:
// this runs from a timer).
void ClusterConsumer::reap() {
  retiring_.erase(std::remove_if(retiring_.begin(), retiring_.end(), [](const auto& r) { return r->stopped; }),
                  retiring_.end());
  maybe_finish_stop();
}

bool ClusterConsumer::ready(std::string& why) const {
  const SlotMap* map = topology_.map();
  if (stopping_ || map == nullptr || workers_.empty()) {
    why = "the cluster's slot map is not known yet";
    return false;
  }
  size_t buckets = 0;
  for (const auto& [node, worker] : workers_) {
    if (!worker->ready(why)) return false;
    buckets += worker->buckets().size();
  }
  if (buckets != static_cast<size_t>(options_.buckets)) {
    why = "not every bucket has a worker yet";
    return false;
  }
  return true;
}

void ClusterConsumer::stop(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(done);
  spdlog::info("stopping: finishing what the workers read");
  topology_.close();
  for (auto& [node, worker] : workers_) retire(std::move(worker), "stopping");
  workers_.clear();
  reap_timer_.arm(std::chrono::microseconds(0));
}

void ClusterConsumer::maybe_finish_stop() {
  if (!stopping_ || !retiring_.empty() || !on_stopped_) return;
  const ConsumerStats& s = shared_.stats;
  spdlog::info("stopped: read={} acked={} retried={} reclaimed={} dead_lettered={} group_recreated={}", s.read,
               s.acked, s.retried, s.reclaimed, s.dead_lettered, s.group_recreated);
  auto done = std::move(on_stopped_);
  on_stopped_ = nullptr;
  done();
}

}  // namespace expiry
