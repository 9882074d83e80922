// Settings of the expiry-relay service, resolved from flags, EXPIRY_RELAY_* env and --config.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "config/settings.h"

namespace expiry {

struct RelayConfig {
  RedisEndpoint redis;
  std::string ns = "expiry";
  std::string stream;                             // default: NS:stream
  std::string group = "workers";                  // consumer group created on the stream
  std::chrono::milliseconds sweep_interval{1000}; // longest gap between two sweeps
  int sweep_batch = 100;                          // tasks claimed per sweep call
  int sweep_pipeline = 4;                         // sweep calls in flight while a backlog drains
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds watchdog_interval{1000};  // PING / health probe period
  std::chrono::milliseconds watchdog_timeout{3000};   // silence after which a connection is dropped
  BackoffPolicy reconnect;
  int max_inflight_claims = 1000;  // event claims in flight; more events fall back to the sweep
  bool require_notifications = false;
  bool require_noeviction = false;   // maxmemory-policy other than noeviction is fatal
  std::chrono::milliseconds unhealthy_after{60000};  // /healthz 503 after this long unready; 0: never
  bool event_claims = true;    // claim tasks on expired events (off: the sweep alone forwards)
  bool next_due_timer = true;  // arm the sweep for the earliest due task (off: periodic sweep only)
  int metrics_port = 0;              // HTTP /metrics, /healthz, /readyz; 0: off
  std::string metrics_bind = "127.0.0.1";
  std::string log_format = "text";  // text | json
  std::string log_level = "info";
  std::string instance;             // names this relay in CLIENT LIST and its health channel
};

// The options common to every program of the project (relay, ctl, consumers).
std::vector<OptionSpec> connection_option_specs();
// The relay's `stream` and `group`; expiry-ctl reads them too, as its defaults.
std::vector<OptionSpec> stream_option_specs();
std::vector<OptionSpec> relay_option_specs();

// Builds the typed config; throws ConfigError for values that parse but make no sense
// (a bad URL, an unreadable password file, a bad namespace, timeouts out of order).
RelayConfig relay_config_from(const Settings& s);

// Applies the options shared with other programs: URL (+ password file), namespace.
void apply_connection_settings(const Settings& s, RedisEndpoint& redis, std::string& ns);

// Applies stream_option_specs(): the stream (empty: NS:stream) must pass stream_name_error for
// `ns`, the group must not be empty. Throws ConfigError naming the setting's source.
void apply_stream_settings(const Settings& s, const std::string& ns, std::string& stream, std::string& group);

// "<hostname>-<pid>", the default name of a relay or consumer instance.
std::string default_instance_name();

// Reads a password file: its first line, without the newline. Throws ConfigError when the file
// cannot be read (missing, a directory, permission denied, I/O error) or the line is empty.
std::string read_password_file(const std::string& path);

}  // namespace expiry
