// Resolution of expiry-ctl's shared options; see ctl_settings.h.
#include "ctl/ctl_settings.h"

#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "config/relay_config.h"

namespace expiry {
namespace {

void add_setting_flag(CLI::App& app, GlobalOptions& options, const std::string& name, const std::string& help) {
  auto& flags = options.flags;
  app.add_option_function<std::string>(
      flag_name(name), [&flags, name](const std::string& v) { flags[name] = v; }, help);
}

}  // namespace

std::vector<OptionSpec> ctl_option_specs() {
  auto specs = connection_option_specs();
  const auto streams = stream_option_specs();
  specs.insert(specs.end(), streams.begin(), streams.end());
  const auto audit = audit_option_specs();
  specs.insert(specs.end(), audit.begin(), audit.end());
  return specs;
}

void add_global_options(CLI::App& app, GlobalOptions& options) {
  add_flags(app, connection_option_specs(), options.flags);
  app.add_option("--config", options.config_path,
                 "JSON config file, may be the relay's: only redis_url, password_file, namespace, stream and group "
                 "are used (env EXPIRY_RELAY_CONFIG)");
}

void add_stream_flag(CLI::App& app, GlobalOptions& options, const std::string& help) {
  add_setting_flag(app, options, "stream", help);
}

void add_group_flag(CLI::App& app, GlobalOptions& options, const std::string& help) {
  add_setting_flag(app, options, "group", help);
}

nlohmann::json ctl_keys_only(const nlohmann::json& file) {
  if (!file.is_object()) return file;
  std::set<std::string> used;
  for (const auto& spec : ctl_option_specs()) used.insert(spec.name);
  std::set<std::string> relay_only;
  for (const auto& spec : relay_option_specs()) {
    if (used.count(spec.name) == 0) relay_only.insert(spec.name);
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
  if (!path.empty()) file = ctl_keys_only(read_json_file(path));
  const auto settings =
      Settings::resolve(ctl_option_specs(), path.empty() ? nullptr : &file, path, env, kEnvPrefix, options.flags);
  CtlTarget target;
  apply_connection_settings(settings, target.redis, target.ns);
  apply_stream_settings(settings, target.ns, target.stream, target.group);
  target.buckets = apply_bucket_setting(settings);
  target.audit_max_entries = settings.integer("audit_max_entries");
  return target;
}

}  // namespace expiry
