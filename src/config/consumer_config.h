// Settings of a stream consumer-group worker (order-canceller and other consumers), resolved
// like the relay's: flags > <PREFIX>_* env > --config JSON > defaults.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "config/settings.h"

namespace expiry {

struct ConsumerConfig {
  RedisEndpoint redis;
  std::string ns = "expiry";
  std::string stream;                          // default: consumer_option_specs' default_stream, else NS:stream
  std::string dead_stream;                     // default <stream>:dead
  std::string group = "workers";
  std::string consumer;                        // default hostname-pid
  int batch = 64;                              // entries per XREADGROUP / reclaim round
  std::chrono::milliseconds block{1000};       // XREADGROUP BLOCK
  int buckets = 0;                             // 0: NS:buckets in Redis, else 64 on a cluster (bucket_plan.h)
  std::chrono::milliseconds idle{50};          // cluster, while a node's doorbell is not subscribed: poll period
  std::chrono::milliseconds safety_poll{30000};  // cluster: each bucket stream is read at least this often, rung or not
  std::chrono::milliseconds min_idle{5000};    // pending this long (unacked) → reclaimable
  std::chrono::milliseconds reclaim_interval{1000};
  int max_deliveries = 5;                      // deliveries (or failed attempts) before an entry is dead-lettered
  BackoffPolicy retry{std::chrono::milliseconds(1000), std::chrono::milliseconds(300000), 0.0};  // retry_delay()
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds watchdog_interval{1000};
  std::chrono::milliseconds watchdog_timeout{5000};
  BackoffPolicy reconnect;
  int metrics_port = 0;                        // 0: no HTTP endpoint
  std::string metrics_bind = "127.0.0.1";
  std::string log_format = "text";
  std::string log_level = "info";
};

// `default_stream` is the stream a consumer reads when none is configured; empty means the
// namespace's default stream NS:stream (the relay's).
std::vector<OptionSpec> consumer_option_specs(const std::string& default_stream = "");
// Throws ConfigError for values that make no sense together (e.g. BLOCK >= watchdog timeout).
ConsumerConfig consumer_config_from(const Settings& s);

}  // namespace expiry
