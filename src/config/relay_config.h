// Settings of the expiry-relay service, resolved from flags, EXPIRY_RELAY_* env and --config.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "config/service_options.h"  // the shared options, for the relay's users too
#include "config/settings.h"

namespace expiry {

struct RelayConfig {
  RedisEndpoint redis;
  std::string ns = "expiry";
  std::string stream;                             // default: NS:stream
  std::string group = "workers";                  // consumer group created on the stream
  // Tasks later than this past due (and without a limit of their own) are dead-lettered with
  // reason `late` instead of forwarded; 0: no limit, every task fires however late.
  long long max_late_ms = 0;
  // Where late tasks of `stream` go: default STREAM:dead (the consumers' default). A namespace
  // with bucket streams always uses each bucket's NS:{B}:dead.
  std::string dead_stream;
  int buckets = 0;                                // 0: the count in NS:buckets, else 64 on a cluster, 1 on one Redis
  std::chrono::milliseconds sweep_interval{10000}; // longest gap between two sweeps
  std::chrono::milliseconds sweep_coalesce{2};    // a timed sweep waits this long after its task's due time
  int sweep_batch = 100;                          // tasks claimed per sweep call
  int sweep_pipeline = 4;                         // sweep calls in flight while a backlog drains
  // Stream retention: every trim interval, each stream the relay forwards into loses the entries
  // every consumer group has acknowledged that are older than stream_retention (expiry_trim).
  std::chrono::milliseconds stream_retention{3600000};   // 0: keep nothing acknowledged
  std::chrono::milliseconds stream_trim_interval{10000}; // 0: never trim
  std::vector<std::string> trim_streams;                 // per-task streams trimmed too (one Redis only)
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds watchdog_interval{1000};  // how often overdue replies are looked for
  std::chrono::milliseconds watchdog_timeout{3000};   // silence after which a connection is dropped
  // The health probe (a PUBLISH to the relay's own channel) proves the subscription alive, and
  // keeps the command connection busy enough that it never needs a PING of its own.
  std::chrono::milliseconds health_probe_interval{5000};
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

std::vector<OptionSpec> relay_option_specs();

// Builds the typed config; throws ConfigError for values that parse but make no sense
// (a bad URL, an unreadable password file, a bad namespace, timeouts out of order).
RelayConfig relay_config_from(const Settings& s);

// "a,b" → {"a", "b"}: the trim_streams list, without `stream` (trimmed anyway) and repeats.
// Throws ConfigError for an empty name or one stream_name_error refuses in namespace `ns`.
std::vector<std::string> parse_trim_streams(const std::string& text, const std::string& ns,
                                           const std::string& stream);

}  // namespace expiry
