// Consumer: the reusable consumer-group member a service builds its handler on (order-canceller
// today; the webhook dispatcher next). Given the layout LayoutProbe found, it runs one
// NodeConsumer on a single Redis (the configured stream, read with a blocking XREADGROUP) or a
// ClusterConsumer on a cluster (one NodeConsumer per primary over the bucket streams), the way
// the relay runs one Relay or a ClusterRelay. The handler sees the same interface in both:
// the entry, where to run its calls (EntryContext), and done(Done | Retry | Reject).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "config/consumer_config.h"
#include "consumer/cluster_consumer.h"
#include "consumer/node_consumer.h"
#include "io/event_loop.h"
#include "io/layout_probe.h"

namespace expiry {

class Consumer {
 public:
  // `handler_library`: the Lua source of a Function library the handler calls, loaded on every
  // node (empty: none).
  Consumer(EventLoop& loop, const ConsumerConfig& config, const RedisLayout& layout, EntryHandler handler,
           std::string handler_library = {});
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  // Called when Redis refuses AUTH/SELECT before any connection was ready (a configuration
  // error: the caller should exit non-zero); later refusals are logged and retried.
  void set_on_fatal(std::function<void(const std::string&)> fn) { shared_.on_fatal = std::move(fn); }

  // Lets reads go on while fewer than `n` entries are unsettled (0, the default: one batch at a
  // time), for a handler that queues entries itself. Before start().
  void set_max_unsettled(size_t n) { shared_.max_unsettled = n; }

  void start();
  // Stops reading; what was read is handled and acknowledged, then `done` runs from the loop.
  void stop(std::function<void()> done);
  // Ready means "can consume" (NodeConsumer::ready on every node); otherwise `why` says what is not.
  bool ready(std::string& why) const;
  const ConsumerStats& stats() const { return shared_.stats; }

 private:
  ConsumerShared shared_;
  std::unique_ptr<NodeConsumer> node_;        // a single Redis
  std::unique_ptr<ClusterConsumer> cluster_;  // a cluster
  std::function<void()> on_stopped_;
};

}  // namespace expiry
