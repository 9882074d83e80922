// The relay's option table and its validation.
#include "config/relay_config.h"

#include <algorithm>

#include "base/errors.h"
#include "functions/key_layout.h"

namespace expiry {

std::vector<OptionSpec> relay_option_specs() {
  auto specs = connection_option_specs();
  append_specs(specs, stream_option_specs());
  append_specs(specs, {
      {"dead_stream", OptionKind::String,
       "dead-letter stream for tasks later than their lateness limit (empty: STREAM:dead; bucket streams "
       "NS:{B}:stream always use NS:{B}:dead)",
       ""},
      {"max_late_ms", OptionKind::Integer,
       "tasks more than this late when claimed (after an outage or a pause) go to the dead-letter stream with "
       "reason late instead of the stream; a task's own max_late_ms wins (0: no limit, every task fires)",
       "0", 0, 253402300799999},
      {"sweep_interval_ms", OptionKind::Integer,
       "longest time between two sweeps (the safety net: timers, wake messages and the sweep after every "
       "reconnect take tasks on time)",
       "10000", 10, 3600000},
      {"sweep_batch", OptionKind::Integer, "tasks claimed per sweep call", "100", 1, 10000},
      {"sweep_coalesce_ms", OptionKind::Integer,
       "a sweep armed for a task's due time runs this much later, claiming in the same call every task that "
       "comes due meanwhile: fewer calls and less Redis CPU, each task at most this late (0: at its due time)",
       "2", 0, 1000},
      {"sweep_pipeline", OptionKind::Integer, "sweep calls kept in flight while a backlog drains", "4", 1, 16},
      {"stream_retention_ms", OptionKind::Integer,
       "acknowledged stream entries younger than this are kept (0: trim every entry all groups acknowledged)",
       "3600000", 0, 31536000000},
      {"stream_trim_interval_ms", OptionKind::Integer,
       "time between two trims of each stream (0: never trim; else at least 100)", "10000", 0, 86400000},
      {"trim_streams", OptionKind::String,
       "comma-separated per-task streams to trim too (e.g. orders:timeouts; one Redis only: a cluster relay "
       "trims its bucket streams)",
       ""},
  });
  append_specs(specs, watchdog_option_specs("period of the watchdog's check for overdue replies", "3000"));
  specs.push_back({"health_probe_interval_ms", OptionKind::Integer,
                   "period of the subscription's health probe, which is also the command connection's keepalive "
                   "(a dead subscription is found within this plus watchdog_timeout_ms)",
                   "5000", 100, 600000});
  append_specs(specs, reconnect_option_specs());
  append_specs(specs, {
      {"max_inflight_claims", OptionKind::Integer, "event claims in flight before events defer to the sweep",
       "1000", 1, 1000000},
      {"require_notifications", OptionKind::Boolean,
       "exit if notify-keyspace-events lacks E and x (default: warn and rely on the sweep)", "false"},
      {"require_noeviction", OptionKind::Boolean,
       "exit unless maxmemory-policy is noeviction (default: warn; eviction can lose pending tasks)", "false"},
      {"event_claims", OptionKind::Boolean, "claim a task when its trigger's expired event arrives", "true"},
      {"next_due_timer", OptionKind::Boolean,
       "arm the sweep for the earliest due task; off leaves tasks to events and the periodic sweep "
       "(used by the benchmark baselines)",
       "true"},
  });
  append_specs(specs, metrics_option_specs({
      {"unhealthy_after_ms", OptionKind::Integer,
       "/healthz answers 503 after this long without a ready connection to Redis (0: never)", "60000", 0,
       86400000},
  }));
  append_specs(specs, log_option_specs());
  specs.push_back({"instance", OptionKind::String, "instance name (default: hostname-pid)", ""});
  return specs;
}

std::vector<std::string> parse_trim_streams(const std::string& text, const std::string& ns,
                                           const std::string& stream) {
  std::vector<std::string> streams;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) {
      if (text.empty()) break;
      throw ConfigError("trim_streams: empty stream name in '" + text + "'");
    }
    if (auto err = stream_name_error(name, ns)) throw ConfigError("trim_streams: " + *err);
    if (name != stream && std::find(streams.begin(), streams.end(), name) == streams.end()) streams.push_back(name);
  }
  return streams;
}

RelayConfig relay_config_from(const Settings& s) {
  RelayConfig c;
  apply_connection_settings(s, c.redis, c.ns);
  apply_stream_settings(s, c.ns, c.stream, c.group);
  c.buckets = apply_bucket_setting(s);
  c.max_late_ms = s.integer("max_late_ms");
  c.dead_stream = s.text("dead_stream").empty() ? c.stream + ":dead" : s.text("dead_stream");
  if (auto err = stream_name_error(c.dead_stream, c.ns)) throw ConfigError(s.source("dead_stream") + ": " + *err);
  if (c.dead_stream == c.stream) {
    throw ConfigError(s.source("dead_stream") + ": dead_stream must differ from the stream (" + c.stream + ")");
  }
  c.sweep_interval = std::chrono::milliseconds(s.integer("sweep_interval_ms"));
  c.sweep_batch = static_cast<int>(s.integer("sweep_batch"));
  c.sweep_coalesce = std::chrono::milliseconds(s.integer("sweep_coalesce_ms"));
  c.sweep_pipeline = static_cast<int>(s.integer("sweep_pipeline"));
  c.stream_retention = std::chrono::milliseconds(s.integer("stream_retention_ms"));
  c.stream_trim_interval = std::chrono::milliseconds(s.integer("stream_trim_interval_ms"));
  try {
    c.trim_streams = parse_trim_streams(s.text("trim_streams"), c.ns, c.stream);
  } catch (const ConfigError& e) {
    throw ConfigError(s.source("trim_streams") + ": " + e.what());
  }
  if (c.stream_trim_interval.count() != 0 && c.stream_trim_interval.count() < 100) {
    throw ConfigError(s.source("stream_trim_interval_ms") + ": stream_trim_interval_ms must be 0 (never trim) or at least 100, not " +
                      std::to_string(c.stream_trim_interval.count()));
  }
  apply_watchdog_settings(s, c.connect_timeout, c.watchdog_interval, c.watchdog_timeout);
  if (c.watchdog_timeout <= c.watchdog_interval) {
    throw ConfigError("watchdog_timeout_ms (" + std::to_string(c.watchdog_timeout.count()) +
                      ") must be larger than watchdog_interval_ms (" + std::to_string(c.watchdog_interval.count()) +
                      ")");
  }
  c.health_probe_interval = std::chrono::milliseconds(s.integer("health_probe_interval_ms"));
  apply_reconnect_settings(s, c.reconnect);
  c.max_inflight_claims = static_cast<int>(s.integer("max_inflight_claims"));
  c.require_notifications = s.boolean("require_notifications");
  c.require_noeviction = s.boolean("require_noeviction");
  c.event_claims = s.boolean("event_claims");
  c.next_due_timer = s.boolean("next_due_timer");
  apply_metrics_settings(s, c.metrics_port, c.metrics_bind);
  c.unhealthy_after = std::chrono::milliseconds(s.integer("unhealthy_after_ms"));
  apply_log_settings(s, c.log_format, c.log_level);
  check_log_settings(s, c.log_format, c.log_level);
  c.instance = s.text("instance").empty() ? default_instance_name() : s.text("instance");
  for (char ch : c.instance) {
    if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7F) {
      throw ConfigError(s.source("instance") + ": instance name must not contain spaces or control characters");
    }
  }
  return c;
}

}  // namespace expiry
