// LayoutProbe: finds out, on the loop and without blocking it, how a service must treat the Redis
// at its URL: whether it is a cluster (INFO cluster: cluster_enabled:1), and the namespace's
// bucket count (NS:buckets reconciled with the `buckets` setting by plan_buckets, and recorded
// with SET NX when the plan says so, then read back: another program may have stored first).
// The relay and the consumers start from it alike.
//
// Contracts: a user refused INFO (NOPERM) is taken to be on a single Redis (a cluster service's
// user needs +info); an unreachable Redis is retried (the connection's backoff, logged); a MOVED
// reply is followed to the node it names; an error that waiting may cure is asked again after
// 500 ms. A refused handshake (before any answer: credentials, TLS, an unknown Sentinel master)
// or a bucket count that contradicts the setting calls on_fatal. `done` and on_fatal run from
// the loop, at most one of them, once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "io/event_loop.h"
#include "io/redis_connection.h"
#include "redis/cluster_slots.h"

namespace expiry {

struct RedisLayout {
  bool cluster = false;
  int buckets = 1;  // the namespace's bucket count
};

class LayoutProbe {
 public:
  struct Options {
    RedisEndpoint redis;
    std::string ns;
    int buckets = 0;          // the service's setting (0: what NS:buckets says)
    std::string client_name;  // CLIENT SETNAME of the probe's connection
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds watchdog_interval{1000};
    std::chrono::milliseconds watchdog_timeout{3000};
    BackoffPolicy backoff;
  };

  LayoutProbe(EventLoop& loop, Options options);
  LayoutProbe(const LayoutProbe&) = delete;
  LayoutProbe& operator=(const LayoutProbe&) = delete;

  void start(std::function<void(const RedisLayout&)> done, std::function<void(const std::string&)> on_fatal);

  // The options of a service's settings (RelayConfig and ConsumerConfig name these fields alike).
  template <class ServiceConfig>
  static Options options_of(const ServiceConfig& c, std::string client_name) {
    Options o;
    o.redis = c.redis;
    o.ns = c.ns;
    o.buckets = c.buckets;
    o.client_name = std::move(client_name);
    o.connect_timeout = c.connect_timeout;
    o.watchdog_interval = c.watchdog_interval;
    o.watchdog_timeout = c.watchdog_timeout;
    o.backoff = c.reconnect;
    return o;
  }

 private:
  void connect(const NodeAddress& node);
  void ask_cluster();
  void read_buckets();
  void on_buckets(const Reply& reply);
  void retry_later(const std::string& why);
  void finish(std::function<void()> fn);

  EventLoop& loop_;
  const Options options_;
  bool cluster_ = false;                        // INFO said so
  std::function<void(const RedisLayout&)> done_;
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
