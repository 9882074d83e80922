// Finds out, on the loop, how a consumer must read a namespace: whether the Redis at its URL is
// a cluster (INFO cluster: cluster_enabled:1) and, on a cluster, the namespace's bucket count
// (NS:buckets, reconciled with the `buckets` setting by plan_buckets and recorded with
// SET NX when absent). On one Redis nothing else is read: the consumer keeps its configured stream.
//
// Contracts: a user refused INFO (NOPERM) is taken to be on a single Redis (a cluster consumer's
// user needs +info); an unreachable Redis is retried (the connection's backoff); a MOVED reply is
// followed to the node it names; an error that waiting may cure is asked again after 500 ms. A
// refused handshake (before any answer) or a bucket count that contradicts the setting calls
// on_fatal. `done` and on_fatal run from the loop, at most one of them, once.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config/consumer_config.h"
#include "io/event_loop.h"
#include "io/redis_connection.h"
#include "protocol/cluster_slots.h"

namespace expiry {

struct ConsumerLayout {
  bool cluster = false;
  int buckets = 1;  // on a cluster: the namespace's bucket count
};

class LayoutProbe {
 public:
  LayoutProbe(EventLoop& loop, const ConsumerConfig& config);
  LayoutProbe(const LayoutProbe&) = delete;
  LayoutProbe& operator=(const LayoutProbe&) = delete;

  void start(std::function<void(const ConsumerLayout&)> done, std::function<void(const std::string&)> on_fatal);

 private:
  void connect(const NodeAddress& node);
  void ask_cluster();
  void read_buckets();
  void on_buckets(const Reply& reply);
  void retry_later(const std::string& why);
  void finish(std::function<void()> fn);

  EventLoop& loop_;
  const ConsumerConfig& config_;
  std::function<void(const ConsumerLayout&)> done_;
  std::function<void(const std::string&)> on_fatal_;
  std::unique_ptr<RedisConnection> conn_;
  std::unique_ptr<RedisConnection> old_conn_;  // replaced by a MOVED; destroyed from a timer
  std::optional<NodeAddress> moved_to_;
  bool finished_ = false;
  bool stored_ = false;                         // SET NX was sent once
  std::function<void()> finish_fn_;
  Timer switch_timer_;                          // follows a MOVED outside reply callbacks
  Timer retry_timer_;
  Timer finish_timer_;
};

}  // namespace expiry
