// Fuzz target for the relay's settings: the input is the --config JSON file's contents, parsed
// with nlohmann::json::parse, resolved by Settings::resolve over relay_option_specs() (no env,
// no flags) and turned into a RelayConfig by relay_config_from.
// Invariants: only ConfigError and nlohmann parse_error escape; an accepted config respects
// every bound of the option table and the cross-option rules; Settings::describe() never shows
// the Redis URL (it may hold a password) nor the password read from password_file.
// A non-empty password_file is pointed at a temporary file of this process (so the fuzzer
// cannot make the target read /dev/zero or a terminal); the file name itself is not fuzzed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "config/relay_config.h"
#include "config/settings.h"
#include "functions/key_layout.h"
#include "fuzz_check.h"
#include "fuzz_targets.h"

namespace expiry::fuzz {
namespace {

constexpr const char* kFilePassword = "pw-from-file-7f3a";

// A password file written once per process, removed at exit.
const std::string& password_file_path() {
  static const std::string path = [] {
    char name[] = "/tmp/expiry-fuzz-password-XXXXXX";
    const int fd = mkstemp(name);
    require(fd >= 0, "mkstemp for the password file");
    close(fd);
    std::ofstream(name) << kFilePassword << "\n";
    static std::string to_remove = name;
    std::atexit([] { std::remove(to_remove.c_str()); });
    return std::string(name);
  }();
  return path;
}

void check_config(std::string_view input, const Settings& settings, const RelayConfig& c) {
  const std::string shown = settings.describe();
  const std::string& url = settings.text("redis_url");
  require(url.empty() || shown.find("redis_url=*** (") != std::string::npos, "describe() hides redis_url", shown);
  // (The fuzzer learns the password from the comparisons and may put it in another option.)
  if (input.find(kFilePassword) == std::string_view::npos) {
    require(shown.find(kFilePassword) == std::string::npos, "describe() shows the file's password", shown);
  }

  require(!namespace_error(c.ns), "the namespace is valid", c.ns);
  require(!c.stream.empty() && !c.group.empty(), "stream and group are not empty");
  require(c.sweep_interval.count() >= 10 && c.sweep_interval.count() <= 3600000, "sweep_interval_ms bounds");
  require(c.sweep_batch >= 1 && c.sweep_batch <= 10000, "sweep_batch bounds");
  require(c.connect_timeout.count() >= 10 && c.connect_timeout.count() <= 600000, "connect_timeout_ms bounds");
  require(c.watchdog_interval.count() >= 10, "watchdog_interval_ms bounds");
  require(c.watchdog_timeout > c.watchdog_interval, "watchdog timeout above its interval");
  require(c.reconnect.initial.count() >= 1 && c.reconnect.max >= c.reconnect.initial, "reconnect delays ordered");
  require(c.max_inflight_claims >= 1 && c.max_inflight_claims <= 1000000, "max_inflight_claims bounds");
  require(c.metrics_port >= 0 && c.metrics_port <= 65535, "metrics_port bounds");
  require(c.log_format == "text" || c.log_format == "json", "log_format", c.log_format);
  require(!c.instance.empty(), "instance is set");
  for (char ch : c.instance) {
    require(static_cast<unsigned char>(ch) > 0x20 && ch != 0x7F, "instance has no spaces or controls", c.instance);
  }
  require(c.redis.port >= 1 && c.redis.port <= 65535 && !c.redis.host.empty(), "endpoint", c.redis.redacted());
  if (!settings.text("password_file").empty()) {
    require(c.redis.password == kFilePassword, "password_file overrides the URL's password");
  }
}

}  // namespace

void fuzz_config_json(std::string_view input) {
  const auto no_env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  try {
    nlohmann::json file = nlohmann::json::parse(input.begin(), input.end());
    if (file.is_object()) {
      auto it = file.find("password_file");
      if (it != file.end() && it->is_string() && !it->get<std::string>().empty()) *it = password_file_path();
    }
    const Settings settings =
        Settings::resolve(relay_option_specs(), &file, "fuzz.json", no_env, "EXPIRY_RELAY", {});
    const RelayConfig config = relay_config_from(settings);
    check_config(input, settings, config);
  } catch (const ConfigError& e) {
    require(*e.what() != '\0', "a ConfigError says what is wrong");
  } catch (const nlohmann::json::parse_error&) {
    // Not JSON: read_json_file turns this into a ConfigError naming the file.
  } catch (const nlohmann::json::out_of_range& e) {
    // Known finding "json-number-overflow": a number beyond double (1e400) throws out_of_range
    // 406 from parse, which read_json_file does not convert: the relay ends in std::terminate.
    if (e.id != 406 || !tolerate_known_finding("json-number-overflow")) throw;
  }
}

}  // namespace expiry::fuzz
