// See service_options.h.
#include "config/service_options.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <iostream>

#include <CLI/CLI.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "config/text_file.h"
#include "functions/key_layout.h"
#include "redis/hash_slot.h"

namespace expiry {
namespace {

constexpr int kExitConfigError = 2;

bool is_log_level(const std::string& level) {
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  for (const char* l : kLevels) {
    if (level == l) return true;
  }
  return false;
}

std::chrono::milliseconds ms_setting(const Settings& s, const std::string& name) {
  return std::chrono::milliseconds(s.integer(name));
}

}  // namespace

std::vector<OptionSpec> connection_option_specs() {
  std::vector<OptionSpec> specs = {
      {"redis_url", OptionKind::String, "Redis URL redis://[user:password@]host:port[/db] (rediss:// for TLS)",
       "redis://127.0.0.1:6379/0", INT64_MIN, INT64_MAX, true},
      {"password_file", OptionKind::String, "file whose first line is the Redis password (keeps it out of ps)", ""},
  };
  append_specs(specs, sentinel_option_specs());
  append_specs(specs, tls_option_specs());
  append_specs(specs, {
                          {"namespace", OptionKind::String, "key namespace", "expiry"},
                          {"buckets", OptionKind::Integer,
                           "buckets of the namespace, a power of two (0: the count stored in Redis, else 64 on a "
                           "cluster, 1 on one Redis)",
                           "0", 0, 16384},
                      });
  return specs;
}

std::vector<OptionSpec> sentinel_option_specs() {
  return {
      {"sentinel", OptionKind::String,
       "Redis Sentinel: sentinels HOST:PORT[,HOST:PORT...] that name the master (the URL then gives only the "
       "scheme, user, password and db)",
       ""},
      {"sentinel_master", OptionKind::String, "with --sentinel: the name the sentinels monitor the master under", ""},
      {"sentinel_password_file", OptionKind::String,
       "with --sentinel: file whose first line is the sentinels' password (not the data password)", ""},
  };
}

std::vector<OptionSpec> tls_option_specs() {
  return {
      {"tls_ca_cert_file", OptionKind::String, "rediss://: CA certificates (PEM) that verify the server (default: the system's)", ""},
      {"tls_ca_cert_dir", OptionKind::String, "rediss://: directory of CA certificates (c_rehash layout)", ""},
      {"tls_cert_file", OptionKind::String, "rediss://: client certificate (PEM) for mutual TLS", ""},
      {"tls_key_file", OptionKind::String, "rediss://: the client certificate's private key (PEM)", ""},
      {"tls_server_name", OptionKind::String, "rediss://: name sent (SNI) and verified (default: the URL's host)", ""},
      {"tls_insecure", OptionKind::Boolean, "rediss://: do not verify the server (testing only; warned at start)", "false"},
  };
}

std::vector<std::string> tls_flags(const TlsSettings& tls) {
  std::vector<std::string> flags;
  const auto add = [&](const char* flag, const std::string& value) {
    if (!value.empty()) flags.push_back(std::string(flag) + "=" + value);
  };
  add("--tls-ca-cert-file", tls.ca_cert_file);
  add("--tls-ca-cert-dir", tls.ca_cert_dir);
  add("--tls-cert-file", tls.cert_file);
  add("--tls-key-file", tls.key_file);
  add("--tls-server-name", tls.server_name);
  if (tls.insecure) flags.push_back("--tls-insecure");
  return flags;
}

std::vector<OptionSpec> stream_option_specs() {
  return {
      {"stream", OptionKind::String, "default stream for forwarded tasks (empty: NAMESPACE:stream)", ""},
      {"group", OptionKind::String, "consumer group created on the stream", "workers"},
  };
}

std::vector<OptionSpec> audit_option_specs() {
  return {{"audit_max_entries", OptionKind::Integer,
           "the audit trail (NAMESPACE:audit) keeps about this many records of write and admin actions, the oldest "
           "trimmed (0: none are written)",
           "100000", 0, 1000000000}};
}

std::vector<OptionSpec> watchdog_option_specs(const std::string& interval_help, const std::string& timeout_default) {
  return {
      {"connect_timeout_ms", OptionKind::Integer, "connect and handshake timeout", "2000", 10, 600000},
      {"watchdog_interval_ms", OptionKind::Integer, interval_help, "1000", 10, 600000},
      {"watchdog_timeout_ms", OptionKind::Integer, "silence after which a connection is dropped", timeout_default, 20,
       3600000},
  };
}

std::vector<OptionSpec> reconnect_option_specs() {
  return {
      {"reconnect_initial_ms", OptionKind::Integer, "first reconnect delay", "100", 1, 600000},
      {"reconnect_max_ms", OptionKind::Integer, "largest reconnect delay", "5000", 1, 3600000},
  };
}

std::vector<OptionSpec> metrics_option_specs(const std::vector<OptionSpec>& health) {
  std::vector<OptionSpec> specs = {
      {"metrics_port", OptionKind::Integer, "HTTP port for /metrics, /healthz, /readyz (0: off)", "0", 0, 65535}};
  append_specs(specs, health);
  specs.push_back({"metrics_bind", OptionKind::String, "HTTP bind address", "127.0.0.1"});
  return specs;
}

std::vector<OptionSpec> log_option_specs() {
  return {
      {"log_format", OptionKind::String, "text or json", "text"},
      {"log_level", OptionKind::String, "trace, debug, info, warn, error", "info"},
  };
}

void append_specs(std::vector<OptionSpec>& specs, const std::vector<OptionSpec>& more) {
  specs.insert(specs.end(), more.begin(), more.end());
}

void apply_tls_settings(const Settings& s, TlsSettings& tls) {
  tls.ca_cert_file = s.text("tls_ca_cert_file");
  tls.ca_cert_dir = s.text("tls_ca_cert_dir");
  tls.cert_file = s.text("tls_cert_file");
  tls.key_file = s.text("tls_key_file");
  tls.server_name = s.text("tls_server_name");
  tls.insecure = s.boolean("tls_insecure");
  if (auto err = tls_settings_error(tls)) throw ConfigError(*err);
  // Read now, so a missing or unreadable file is a configuration error at start (and in
  // --check-config), not a reconnect loop. io/tls_context reads them again to load them.
  for (const char* name : {"tls_ca_cert_file", "tls_cert_file", "tls_key_file"}) {
    const std::string& path = s.text(name);
    if (path.empty()) continue;
    try {
      read_text_file(path, name);
    } catch (const ConfigError& e) {
      throw ConfigError(s.source(name) + ": " + e.what());
    }
  }
  if (!tls.ca_cert_dir.empty()) {
    DIR* dir = opendir(tls.ca_cert_dir.c_str());
    if (dir == nullptr) {
      throw ConfigError(s.source("tls_ca_cert_dir") + ": cannot read directory " + tls.ca_cert_dir + ": " +
                        std::strerror(errno));
    }
    closedir(dir);
  }
}

void apply_sentinel_settings(const Settings& s, SentinelSettings& sentinel) {
  sentinel = SentinelSettings{};
  if (!s.text("sentinel").empty()) {
    try {
      sentinel.sentinels = parse_sentinel_list(s.text("sentinel"));
    } catch (const ConfigError& e) {
      throw ConfigError(s.source("sentinel") + ": " + e.what());
    }
  }
  sentinel.master = s.text("sentinel_master");
  if (!s.text("sentinel_password_file").empty()) {
    sentinel.password = read_password_file(s.text("sentinel_password_file"));
  }
  if (auto err = sentinel_settings_error(sentinel)) {
    const char* name = sentinel.enabled() && sentinel.master.empty() ? "sentinel"
                       : !sentinel.enabled() && sentinel.master.empty() ? "sentinel_password_file"
                                                                         : "sentinel_master";
    throw ConfigError(s.source(name) + ": " + *err);
  }
}

void apply_connection_settings(const Settings& s, RedisEndpoint& redis, std::string& ns) {
  try {
    redis = parse_redis_url(s.text("redis_url"));
  } catch (const ConfigError& e) {
    throw ConfigError(s.source("redis_url") + ": " + e.what());
  }
  if (!s.text("password_file").empty()) redis.password = read_password_file(s.text("password_file"));
  apply_tls_settings(s, redis.tls);
  apply_sentinel_settings(s, redis.sentinel);
  ns = s.text("namespace");
  if (auto err = namespace_error(ns)) throw ConfigError(s.source("namespace") + ": " + *err);
}

int apply_bucket_setting(const Settings& s) {
  const long long buckets = s.integer("buckets");
  if (buckets == 0) return 0;
  if (auto err = bucket_count_error(buckets)) throw ConfigError(s.source("buckets") + ": " + *err);
  return static_cast<int>(buckets);
}

void apply_stream_settings(const Settings& s, const std::string& ns, std::string& stream, std::string& group) {
  stream = s.text("stream").empty() ? KeyLayout(ns).default_stream() : s.text("stream");
  if (auto err = stream_name_error(stream, ns)) throw ConfigError(s.source("stream") + ": " + *err);
  group = s.text("group");
  if (group.empty()) throw ConfigError(s.source("group") + ": group must not be empty");
}

void apply_watchdog_settings(const Settings& s, std::chrono::milliseconds& connect_timeout,
                             std::chrono::milliseconds& interval, std::chrono::milliseconds& timeout) {
  connect_timeout = ms_setting(s, "connect_timeout_ms");
  interval = ms_setting(s, "watchdog_interval_ms");
  timeout = ms_setting(s, "watchdog_timeout_ms");
}

void apply_reconnect_settings(const Settings& s, BackoffPolicy& reconnect) {
  reconnect.initial = ms_setting(s, "reconnect_initial_ms");
  reconnect.max = ms_setting(s, "reconnect_max_ms");
  if (reconnect.max < reconnect.initial) {
    throw ConfigError("reconnect_max_ms must not be smaller than reconnect_initial_ms");
  }
}

void apply_metrics_settings(const Settings& s, int& port, std::string& bind) {
  port = static_cast<int>(s.integer("metrics_port"));
  bind = s.text("metrics_bind");
}

void apply_log_settings(const Settings& s, std::string& format, std::string& level) {
  format = s.text("log_format");
  level = s.text("log_level");
}

void check_log_settings(const Settings& s, const std::string& format, const std::string& level) {
  if (format != "text" && format != "json") {
    throw ConfigError(s.source("log_format") + ": log_format must be text or json");
  }
  if (!is_log_level(level)) throw ConfigError(s.source("log_level") + ": unknown log level '" + level + "'");
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

std::optional<int> configure_service(const ServiceIdentity& service, const std::vector<OptionSpec>& specs,
                                     int argc, char** argv, const ServiceConfigure& configure,
                                     const std::function<void()>& start_logging) {
  CLI::App app{service.about};
  std::map<std::string, std::string> flags;
  add_flags(app, specs, flags);
  std::string config_path;
  bool check_only = false;
  app.add_option("--config", config_path, "JSON config file (env " + service.env_prefix + "_CONFIG)");
  app.add_flag("--check-config", check_only, "validate the settings, print them and exit");
  add_version_flag(app, service.program);
  if (auto code = parse_command_line(app, argc, argv, service.program)) return code;
  try {
    const auto settings = load_settings(specs, flags, config_path, service.env_prefix);
    const auto shown = configure(settings);
    if (check_only) {
      std::cout << "configuration OK\n" << settings.describe(shown);
      return 0;
    }
    if (start_logging) start_logging();
  } catch (const std::exception& e) {  // ConfigError; anything else is reported the same way, never an abort
    std::cerr << service.program << ": configuration error: " << escape_text(e.what()) << "\n";
    return kExitConfigError;
  }
  return std::nullopt;
}

}  // namespace expiry
