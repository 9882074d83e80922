// Resolution of expiry-ctl's shared options; see ctl_settings.h.
#include "ctl/ctl_settings.h"

#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "relay_config.h"

namespace expiry {

void add_global_options(CLI::App& app, GlobalOptions& options) {
  add_flags(app, connection_option_specs(), options.flags);
  app.add_option("--config", options.config_path,
                 "JSON config file, may be the relay's: only redis_url, password_file and namespace are used "
                 "(env EXPIRY_RELAY_CONFIG)");
}

nlohmann::json connection_keys_only(const nlohmann::json& file) {
  if (!file.is_object()) return file;
  std::set<std::string> connection;
  for (const auto& spec : connection_option_specs()) connection.insert(spec.name);
  std::set<std::string> relay_only;
  for (const auto& spec : relay_option_specs()) {
    if (connection.count(spec.name) == 0) relay_only.insert(spec.name);
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : file.items()) {
    if (relay_only.count(key) == 0) out[key] = value;
  }
  return out;
}

CtlTarget resolve_target(const GlobalOptions& options, const EnvLookup& env) {
  std::string path = options.config_path;
  if (path.empty()) path = env(std::string(kEnvPrefix) + "_CONFIG").value_or("");
  nlohmann::json file;
  if (!path.empty()) file = connection_keys_only(read_json_file(path));
  const auto settings = Settings::resolve(connection_option_specs(), path.empty() ? nullptr : &file, path, env,
                                          kEnvPrefix, options.flags);
  CtlTarget target;
  apply_connection_settings(settings, target.redis, target.ns);
  return target;
}

}  // namespace expiry
