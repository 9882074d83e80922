// The options every expiry-ctl subcommand shares (where Redis is, which namespace, the relay's
// stream and group), resolved with the relay's machinery: flags > EXPIRY_RELAY_* env > --config
// JSON file > defaults.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/redis_url.h"
#include "config/settings.h"

namespace CLI {
class App;
}

namespace expiry {

constexpr const char* kEnvPrefix = "EXPIRY_RELAY";

// What the command line said; filled by CLI11 through add_global_options and add_stream_flag /
// add_group_flag.
struct GlobalOptions {
  std::map<std::string, std::string> flags;  // settings given as flags (connection options, --stream, --group)
  std::string config_path;                   // --config; empty: env EXPIRY_RELAY_CONFIG, else none
};

// Where the subcommands act.
struct CtlTarget {
  RedisEndpoint redis;
  std::string ns;
  std::string stream;  // the relay's default stream: setting `stream`, or NS:stream when it is empty
  std::string group;   // the relay's consumer group: setting `group`
  int buckets = 0;     // setting `buckets`: 0 to take the count in NS:buckets (bucket_plan.h)
  long long audit_max_entries = 100000;  // setting `audit_max_entries`: the audit trail's retention; 0: none
};

// The settings expiry-ctl resolves: connection_option_specs() and stream_option_specs(), the
// relay's own specs, so both programs read the same keys and env variables the same way.
std::vector<OptionSpec> ctl_option_specs();

// Registers --redis-url, --password-file, --namespace and --config on `app`.
void add_global_options(CLI::App& app, GlobalOptions& options);

// Registers --stream (--group) on a subcommand that reads the relay's stream (group): a value
// given there is the flag layer of the `stream` (`group`) setting, above env and file.
void add_stream_flag(CLI::App& app, GlobalOptions& options, const std::string& help);
void add_group_flag(CLI::App& app, GlobalOptions& options, const std::string& help);

// The keys of a config file shared with the relay that expiry-ctl uses: keys of the relay's
// other options are dropped; anything else (ctl keys, unknown keys) is kept so Settings::resolve
// still rejects typos. A non-object is returned unchanged.
nlohmann::json ctl_keys_only(const nlohmann::json& file);

// Resolves the layers into a target; throws ConfigError naming the bad source (the stream and
// group are checked as the relay checks them, see apply_stream_settings).
CtlTarget resolve_target(const GlobalOptions& options, const EnvLookup& env);

}  // namespace expiry
