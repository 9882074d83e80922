// The options every expiry-ctl subcommand shares (where Redis is, which namespace), resolved with
// the relay's machinery: flags > EXPIRY_RELAY_* env > --config JSON file > defaults.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "redis_url.h"
#include "settings.h"

namespace CLI {
class App;
}

namespace expiry {

constexpr const char* kEnvPrefix = "EXPIRY_RELAY";

// What the command line said; filled by CLI11 through add_global_options.
struct GlobalOptions {
  std::map<std::string, std::string> flags;  // connection options given as flags
  std::string config_path;                   // --config; empty: env EXPIRY_RELAY_CONFIG, else none
};

// Where the subcommands act.
struct CtlTarget {
  RedisEndpoint redis;
  std::string ns;
};

// Registers --redis-url, --password-file, --namespace and --config on `app`.
void add_global_options(CLI::App& app, GlobalOptions& options);

// The connection keys of a config file shared with the relay: keys of relay-only options are
// dropped; anything else (connection keys, unknown keys) is kept so Settings::resolve still
// rejects typos. A non-object is returned unchanged.
nlohmann::json connection_keys_only(const nlohmann::json& file);

// Resolves the layers into a target; throws ConfigError naming the bad source.
CtlTarget resolve_target(const GlobalOptions& options, const EnvLookup& env);

}  // namespace expiry
