// The option specs and settings every service shares (relay, consumers, and partly expiry-ctl):
// connection, stream, watchdog, reconnect, metrics and logs, each as a table to splice into a
// service's own table and an apply_* function that reads it back, plus the command-line and
// settings stage of a service's main (configure_service). Pure but for reading files.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "config/settings.h"

namespace expiry {

// The options common to every program of the project (relay, ctl, consumers): redis_url,
// password_file, tls_option_specs(), namespace, buckets.
std::vector<OptionSpec> connection_option_specs();
// sentinel, sentinel_master, sentinel_password_file: read by apply_sentinel_settings.
std::vector<OptionSpec> sentinel_option_specs();
// tls_ca_cert_file, tls_ca_cert_dir, tls_cert_file, tls_key_file, tls_server_name, tls_insecure
// (redis-cli's names): read by apply_tls_settings.
std::vector<OptionSpec> tls_option_specs();
// The command-line flags that give another program of the project the same `tls` settings.
std::vector<std::string> tls_flags(const TlsSettings& tls);
// The relay's `stream` and `group`; expiry-ctl reads them too, as its defaults.
std::vector<OptionSpec> stream_option_specs();
// audit_max_entries: the audit trail's retention, read by expiry-api and expiry-ctl, which append
// to it (docs/api.md, "Audit trail").
std::vector<OptionSpec> audit_option_specs();
// connect_timeout_ms, watchdog_interval_ms, watchdog_timeout_ms: services differ in what the
// watchdog does between reads and how long a silence is tolerated.
std::vector<OptionSpec> watchdog_option_specs(const std::string& interval_help, const std::string& timeout_default);
// reconnect_initial_ms, reconnect_max_ms.
std::vector<OptionSpec> reconnect_option_specs();
// metrics_port, then `health` (the service's health-check options, if any), then metrics_bind.
std::vector<OptionSpec> metrics_option_specs(const std::vector<OptionSpec>& health = {});
// log_format, log_level.
std::vector<OptionSpec> log_option_specs();

// Appends `more` to `specs`.
void append_specs(std::vector<OptionSpec>& specs, const std::vector<OptionSpec>& more);

// Reads the tls_* options into `tls` (whose `enabled` the URL set). Throws ConfigError naming the
// source for tls_* without rediss://, a certificate without its key, or a file or directory that
// cannot be read.
void apply_tls_settings(const Settings& s, TlsSettings& tls);
// Reads the sentinel options into `sentinel`. Throws ConfigError naming the source for a list
// that does not parse, sentinels without a master name (or the reverse), a password file
// without sentinels or that cannot be read.
void apply_sentinel_settings(const Settings& s, SentinelSettings& sentinel);
// Applies the options shared with other programs: URL (+ password file, tls_*, sentinel_*),
// namespace.
void apply_connection_settings(const Settings& s, RedisEndpoint& redis, std::string& ns);

// The `buckets` setting: 0 (not set) or a power of two; throws ConfigError naming the source.
// functions/bucket_plan.h reconciles it with the count stored in Redis.
int apply_bucket_setting(const Settings& s);
// Applies stream_option_specs(): the stream (empty: NS:stream) must pass stream_name_error for
// `ns`, the group must not be empty. Throws ConfigError naming the setting's source.
void apply_stream_settings(const Settings& s, const std::string& ns, std::string& stream, std::string& group);

// Reads watchdog_option_specs(); each service checks the timeout against its own intervals.
void apply_watchdog_settings(const Settings& s, std::chrono::milliseconds& connect_timeout,
                             std::chrono::milliseconds& interval, std::chrono::milliseconds& timeout);
// Reads reconnect_option_specs(); throws ConfigError if the largest delay is below the first.
void apply_reconnect_settings(const Settings& s, BackoffPolicy& reconnect);
// Reads metrics_port and metrics_bind.
void apply_metrics_settings(const Settings& s, int& port, std::string& bind);
// Reads log_option_specs() as given.
void apply_log_settings(const Settings& s, std::string& format, std::string& level);
// Throws ConfigError naming the source unless the format is text or json and the level known.
void check_log_settings(const Settings& s, const std::string& format, const std::string& level);

// "<hostname>-<pid>", the default name of a relay or consumer instance.
std::string default_instance_name();

// Reads a password file: its first line, without the newline. Throws ConfigError when the file
// cannot be read (missing, a directory, permission denied, I/O error) or the line is empty.
std::string read_password_file(const std::string& path);

// A service program as its command line presents it.
struct ServiceIdentity {
  std::string program;     // "expiry-relay": --version, messages, log name
  std::string env_prefix;  // "EXPIRY_RELAY": <PREFIX>_<OPTION> and <PREFIX>_CONFIG
  std::string about;       // the first lines of --help
};

// Builds a service's typed config from its settings (throws ConfigError, or anything else, for
// a bad configuration) and returns what --check-config shows resolved (Settings::describe).
using ServiceConfigure = std::function<std::map<std::string, std::string>(const Settings&)>;

// The configuration stage of a service's main: the flags of `specs`, --config, --check-config
// and --version; settings resolved flag > env > file > default; then `configure`. Returns the
// exit code when main is done: 0 after --help, --version or --check-config ("configuration OK"
// and the settings on stdout), 2 after a usage or configuration error ("<program>:
// configuration error: ..." on stderr); nullopt to go on with the service. `start_logging`
// runs after `configure` once the service will run, not for --check-config.
std::optional<int> configure_service(const ServiceIdentity& service, const std::vector<OptionSpec>& specs,
                                     int argc, char** argv, const ServiceConfigure& configure,
                                     const std::function<void()>& start_logging);

}  // namespace expiry
