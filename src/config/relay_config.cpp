// The relay's option table and its validation.
#include "config/relay_config.h"

#include <unistd.h>

#include "protocol/errors.h"
#include "protocol/key_layout.h"
#include "config/text_file.h"

namespace expiry {

std::vector<OptionSpec> connection_option_specs() {
  return {
      {"redis_url", OptionKind::String, "Redis URL redis://[user:password@]host:port[/db]",
       "redis://127.0.0.1:6379/0", INT64_MIN, INT64_MAX, true},
      {"password_file", OptionKind::String, "file whose first line is the Redis password (keeps it out of ps)", ""},
      {"namespace", OptionKind::String, "key namespace", "expiry"},
  };
}

std::vector<OptionSpec> stream_option_specs() {
  return {
      {"stream", OptionKind::String, "default stream for forwarded tasks (empty: NAMESPACE:stream)", ""},
      {"group", OptionKind::String, "consumer group created on the stream", "workers"},
  };
}

std::vector<OptionSpec> relay_option_specs() {
  auto specs = connection_option_specs();
  const auto streams = stream_option_specs();
  specs.insert(specs.end(), streams.begin(), streams.end());
  const std::vector<OptionSpec> own = {
      {"sweep_interval_ms", OptionKind::Integer, "longest time between two sweeps", "1000", 10, 3600000},
      {"sweep_batch", OptionKind::Integer, "tasks claimed per sweep call", "100", 1, 10000},
      {"sweep_pipeline", OptionKind::Integer, "sweep calls kept in flight while a backlog drains", "4", 1, 16},
      {"connect_timeout_ms", OptionKind::Integer, "connect and handshake timeout", "2000", 10, 600000},
      {"watchdog_interval_ms", OptionKind::Integer, "period of PINGs and health probes", "1000", 10, 600000},
      {"watchdog_timeout_ms", OptionKind::Integer, "silence after which a connection is dropped", "3000", 20,
       3600000},
      {"reconnect_initial_ms", OptionKind::Integer, "first reconnect delay", "100", 1, 600000},
      {"reconnect_max_ms", OptionKind::Integer, "largest reconnect delay", "5000", 1, 3600000},
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
      {"metrics_port", OptionKind::Integer, "HTTP port for /metrics, /healthz, /readyz (0: off)", "0", 0, 65535},
      {"unhealthy_after_ms", OptionKind::Integer,
       "/healthz answers 503 after this long without a ready connection to Redis (0: never)", "60000", 0,
       86400000},
      {"metrics_bind", OptionKind::String, "HTTP bind address", "127.0.0.1"},
      {"log_format", OptionKind::String, "text or json", "text"},
      {"log_level", OptionKind::String, "trace, debug, info, warn, error", "info"},
      {"instance", OptionKind::String, "instance name (default: hostname-pid)", ""},
  };
  specs.insert(specs.end(), own.begin(), own.end());
  return specs;
}

std::string default_instance_name() {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return std::string(host[0] ? host : "localhost") + "-" + std::to_string(getpid());
}

std::string read_password_file(const std::string& path) {
  const std::string text = read_text_file(path, "password file");
  std::string line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) throw ConfigError("password file " + path + " is empty");
  return line;
}

void apply_connection_settings(const Settings& s, RedisEndpoint& redis, std::string& ns) {
  try {
    redis = parse_redis_url(s.text("redis_url"));
  } catch (const ConfigError& e) {
    throw ConfigError(s.source("redis_url") + ": " + e.what());
  }
  if (!s.text("password_file").empty()) redis.password = read_password_file(s.text("password_file"));
  ns = s.text("namespace");
  if (auto err = namespace_error(ns)) throw ConfigError(s.source("namespace") + ": " + *err);
}

void apply_stream_settings(const Settings& s, const std::string& ns, std::string& stream, std::string& group) {
  stream = s.text("stream").empty() ? KeyLayout(ns).default_stream() : s.text("stream");
  if (auto err = stream_name_error(stream, ns)) throw ConfigError(s.source("stream") + ": " + *err);
  group = s.text("group");
  if (group.empty()) throw ConfigError(s.source("group") + ": group must not be empty");
}

RelayConfig relay_config_from(const Settings& s) {
  RelayConfig c;
  apply_connection_settings(s, c.redis, c.ns);
  apply_stream_settings(s, c.ns, c.stream, c.group);
  c.sweep_interval = std::chrono::milliseconds(s.integer("sweep_interval_ms"));
  c.sweep_batch = static_cast<int>(s.integer("sweep_batch"));
  c.sweep_pipeline = static_cast<int>(s.integer("sweep_pipeline"));
  c.connect_timeout = std::chrono::milliseconds(s.integer("connect_timeout_ms"));
  c.watchdog_interval = std::chrono::milliseconds(s.integer("watchdog_interval_ms"));
  c.watchdog_timeout = std::chrono::milliseconds(s.integer("watchdog_timeout_ms"));
  if (c.watchdog_timeout <= c.watchdog_interval) {
    throw ConfigError("watchdog_timeout_ms (" + std::to_string(c.watchdog_timeout.count()) +
                      ") must be larger than watchdog_interval_ms (" + std::to_string(c.watchdog_interval.count()) +
                      ")");
  }
  c.reconnect.initial = std::chrono::milliseconds(s.integer("reconnect_initial_ms"));
  c.reconnect.max = std::chrono::milliseconds(s.integer("reconnect_max_ms"));
  if (c.reconnect.max < c.reconnect.initial) {
    throw ConfigError("reconnect_max_ms must not be smaller than reconnect_initial_ms");
  }
  c.max_inflight_claims = static_cast<int>(s.integer("max_inflight_claims"));
  c.require_notifications = s.boolean("require_notifications");
  c.require_noeviction = s.boolean("require_noeviction");
  c.event_claims = s.boolean("event_claims");
  c.next_due_timer = s.boolean("next_due_timer");
  c.metrics_port = static_cast<int>(s.integer("metrics_port"));
  c.unhealthy_after = std::chrono::milliseconds(s.integer("unhealthy_after_ms"));
  c.metrics_bind = s.text("metrics_bind");
  c.log_format = s.text("log_format");
  if (c.log_format != "text" && c.log_format != "json") {
    throw ConfigError(s.source("log_format") + ": log_format must be text or json");
  }
  c.log_level = s.text("log_level");
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  bool level_ok = false;
  for (const char* l : kLevels) level_ok = level_ok || c.log_level == l;
  if (!level_ok) throw ConfigError(s.source("log_level") + ": unknown log level '" + c.log_level + "'");
  c.instance = s.text("instance").empty() ? default_instance_name() : s.text("instance");
  for (char ch : c.instance) {
    if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7F) {
      throw ConfigError(s.source("instance") + ": instance name must not contain spaces or control characters");
    }
  }
  return c;
}

}  // namespace expiry
