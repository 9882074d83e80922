// The consumer's option table and validation.
#include "config/consumer_config.h"

#include "base/errors.h"
#include "config/service_options.h"
#include "functions/key_layout.h"

namespace expiry {

std::vector<OptionSpec> consumer_option_specs(const std::string& default_stream) {
  auto specs = connection_option_specs();
  append_specs(specs, {
      {"stream", OptionKind::String, "stream to consume (empty: NAMESPACE:stream)", default_stream},
      {"dead_stream", OptionKind::String, "dead-letter stream (empty: STREAM:dead)", ""},
      {"group", OptionKind::String, "consumer group", "workers"},
      {"consumer", OptionKind::String, "consumer name, unique per instance (default: hostname-pid)", ""},
      {"batch", OptionKind::Integer, "entries per read", "64", 1, 10000},
      {"block_ms", OptionKind::Integer, "XREADGROUP BLOCK time", "1000", 1, 60000},
      {"idle_ms", OptionKind::Integer,
       "on a cluster, while a node's doorbell subscription is down: wait after a round of reads found every "
       "bucket stream empty", "50", 1, 60000},
      {"safety_poll_ms", OptionKind::Integer,
       "on a cluster: each bucket stream is read at least this often even without its doorbell (the reads are "
       "spread over the period: a node serving L buckets reads L times per period)", "30000", 10, 3600000},
      {"min_idle_ms", OptionKind::Integer, "unacknowledged time after which an entry is reclaimed", "5000", 1,
       86400000},
      {"reclaim_interval_ms", OptionKind::Integer, "how often pending entries are checked", "1000", 10, 3600000},
      {"max_deliveries", OptionKind::Integer,
       "deliveries (attempts, for handler failures) before an entry is dead-lettered", "5", 1, 1000},
      {"retry_base_ms", OptionKind::Integer,
       "after a handler failure, the task is delivered again after this delay, doubled per attempt", "1000", 1,
       86400000},
      {"retry_max_ms", OptionKind::Integer, "cap on the retry delay (at least retry_base_ms)", "300000", 1,
       86400000},
  });
  append_specs(specs, watchdog_option_specs("PING period on idle connections", "5000"));
  append_specs(specs, reconnect_option_specs());
  append_specs(specs, metrics_option_specs());
  append_specs(specs, log_option_specs());
  return specs;
}

ConsumerConfig consumer_config_from(const Settings& s) {
  ConsumerConfig c;
  apply_connection_settings(s, c.redis, c.ns);
  c.stream = s.text("stream").empty() ? KeyLayout(c.ns).default_stream() : s.text("stream");
  c.dead_stream = s.text("dead_stream").empty() ? c.stream + ":dead" : s.text("dead_stream");
  if (auto err = stream_name_error(c.stream, c.ns)) throw ConfigError(s.source("stream") + ": " + *err);
  if (auto err = stream_name_error(c.dead_stream, c.ns)) throw ConfigError(s.source("dead_stream") + ": " + *err);
  c.group = s.text("group");
  if (c.group.empty()) throw ConfigError(s.source("group") + ": group must not be empty");
  c.consumer = s.text("consumer").empty() ? default_instance_name() : s.text("consumer");
  c.batch = static_cast<int>(s.integer("batch"));
  c.block = std::chrono::milliseconds(s.integer("block_ms"));
  c.buckets = apply_bucket_setting(s);
  c.idle = std::chrono::milliseconds(s.integer("idle_ms"));
  c.safety_poll = std::chrono::milliseconds(s.integer("safety_poll_ms"));
  c.min_idle = std::chrono::milliseconds(s.integer("min_idle_ms"));
  c.reclaim_interval = std::chrono::milliseconds(s.integer("reclaim_interval_ms"));
  c.retry.jitter = 0.0;
  // A program that sets the retry policy itself (expiry-webhook: its --config JSON) leaves these
  // options out of its specs, so its --help shows only what works.
  if (s.has("max_deliveries")) {
    c.max_deliveries = static_cast<int>(s.integer("max_deliveries"));
    c.retry.initial = std::chrono::milliseconds(s.integer("retry_base_ms"));
    c.retry.max = std::chrono::milliseconds(s.integer("retry_max_ms"));
    if (c.retry.max < c.retry.initial) {
      throw ConfigError(s.source("retry_max_ms") + ": retry_max_ms (" + std::to_string(c.retry.max.count()) +
                        ") must be at least retry_base_ms (" + std::to_string(c.retry.initial.count()) + ")");
    }
  }
  apply_watchdog_settings(s, c.connect_timeout, c.watchdog_interval, c.watchdog_timeout);
  if (c.watchdog_timeout <= c.block + c.watchdog_interval) {
    throw ConfigError("watchdog_timeout_ms must exceed block_ms + watchdog_interval_ms, or blocked reads look hung");
  }
  apply_reconnect_settings(s, c.reconnect);
  apply_metrics_settings(s, c.metrics_port, c.metrics_bind);
  apply_log_settings(s, c.log_format, c.log_level);
  return c;
}

}  // namespace expiry
