// See consumer.h.
#include "consumer/consumer.h"

#include <spdlog/spdlog.h>

namespace expiry {

Consumer::Consumer(EventLoop& loop, const ConsumerConfig& config, const RedisLayout& layout, EntryHandler handler,
                   std::string handler_library)
    : shared_{config, std::move(handler), std::move(handler_library), {}, {}, nullptr, nullptr, false} {
  if (layout.cluster) {
    cluster_ = std::make_unique<ClusterConsumer>(loop, shared_, layout.buckets);
  } else {
    std::vector<ConsumerLane> lanes = {
        {GroupStream{config.stream, config.dead_stream, config.group, config.consumer}, std::nullopt}};
    node_ = std::make_unique<NodeConsumer>(loop, shared_, config.redis, config.redis.where(), std::move(lanes), true);
  }
}

void Consumer::start() {
  if (node_) node_->start();
  if (cluster_) cluster_->start();
}

bool Consumer::ready(std::string& why) const { return node_ ? node_->ready(why) : cluster_->ready(why); }

void Consumer::stop(std::function<void()> done) {
  if (on_stopped_) return;
  on_stopped_ = std::move(done);
  spdlog::info("stopping: finishing what was read");
  const auto stopped = [this] {
    const ConsumerStats& s = shared_.stats;
    spdlog::info("stopped: read={} acked={} retried={} refused={} reclaimed={} dead_lettered={} group_recreated={}",
                 s.read, s.acked, s.retried, s.refused, s.reclaimed, s.dead_lettered, s.group_recreated);
    on_stopped_();
  };
  if (node_) node_->stop(stopped);
  if (cluster_) cluster_->stop(stopped);
}

}  // namespace expiry
