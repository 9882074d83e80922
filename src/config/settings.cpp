// Layered settings resolution; see settings.h.
#include "config/settings.h"

#include <cctype>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/integers.h"
#include "config/help_formatter.h"
#include "config/text_file.h"
#include "config/unknown_command.h"
#include "generated/version.h"

namespace expiry {
namespace {

std::optional<bool> parse_bool(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  return std::nullopt;
}

// Checks and canonicalises `text` for `spec`; throws ConfigError naming `source`.
std::string canonical(const OptionSpec& spec, const std::string& text, const std::string& source) {
  switch (spec.kind) {
    case OptionKind::String:
      return text;
    case OptionKind::Integer: {
      auto v = parse_int64(text);
      if (!v) throw ConfigError(source + ": " + spec.name + " must be an integer, got '" + text + "'");
      if (*v < spec.min || *v > spec.max) {
        throw ConfigError(source + ": " + spec.name + " must be between " + std::to_string(spec.min) + " and " +
                          std::to_string(spec.max) + ", got " + text);
      }
      return std::to_string(*v);
    }
    case OptionKind::Boolean: {
      auto v = parse_bool(text);
      if (!v) throw ConfigError(source + ": " + spec.name + " must be true or false, got '" + text + "'");
      return *v ? "true" : "false";
    }
  }
  return text;
}

std::string json_to_text(const OptionSpec& spec, const nlohmann::json& v, const std::string& source) {
  switch (spec.kind) {
    case OptionKind::String:
      if (!v.is_string()) throw ConfigError(source + ": " + spec.name + " must be a string");
      return v.get<std::string>();
    case OptionKind::Integer:
      if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))) {
        throw ConfigError(source + ": " + spec.name + " must be an integer within 64-bit range");
      }
      return std::to_string(v.get<int64_t>());
    case OptionKind::Boolean:
      if (!v.is_boolean()) throw ConfigError(source + ": " + spec.name + " must be true or false");
      return v.get<bool>() ? "true" : "false";
  }
  return {};
}

}  // namespace

std::string flag_name(const std::string& option_name) {
  std::string out = "--";
  for (char c : option_name) out.push_back(c == '_' ? '-' : c);
  return out;
}

std::string env_name(const std::string& prefix, const std::string& option_name) {
  std::string out = prefix + "_";
  for (char c : option_name) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

Settings Settings::resolve(const std::vector<OptionSpec>& specs, const nlohmann::json* file,
                           const std::string& file_name, const EnvLookup& env, const std::string& env_prefix,
                           const std::map<std::string, std::string>& flags) {
  Settings s;
  for (const auto& spec : specs) {
    s.entries_[spec.name] = Entry{spec, SettingValue{canonical(spec, spec.default_text, "default"), "default"}};
  }
  if (file != nullptr) {
    const std::string source = "config file " + file_name;
    if (!file->is_object()) throw ConfigError(source + ": top level must be a JSON object");
    for (const auto& [key, value] : file->items()) {
      auto it = s.entries_.find(key);
      if (it == s.entries_.end()) throw ConfigError(source + ": unknown key '" + key + "'");
      it->second.value = {canonical(it->second.spec, json_to_text(it->second.spec, value, source), source), source};
    }
  }
  for (auto& [name, e] : s.entries_) {
    const std::string var = env_name(env_prefix, name);
    if (auto v = env(var)) {
      const std::string source = "env " + var;
      e.value = {canonical(e.spec, *v, source), source};
    }
  }
  for (const auto& [name, text] : flags) {
    auto it = s.entries_.find(name);
    if (it == s.entries_.end()) throw ConfigError("unknown option " + flag_name(name));
    const std::string source = "flag " + flag_name(name);
    it->second.value = {canonical(it->second.spec, text, source), source};
  }
  return s;
}

const Settings::Entry& Settings::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw std::logic_error("no such option: " + name);
  return it->second;
}

const std::string& Settings::text(const std::string& name) const { return entry(name).value.text; }
int64_t Settings::integer(const std::string& name) const { return *parse_int64(entry(name).value.text); }
bool Settings::boolean(const std::string& name) const { return entry(name).value.text == "true"; }
const std::string& Settings::source(const std::string& name) const { return entry(name).value.source; }

std::string Settings::describe(const std::map<std::string, std::string>& shown) const {
  std::ostringstream out;
  for (const auto& [name, e] : entries_) {
    auto it = shown.find(name);
    if (it != shown.end()) {
      const bool resolved = !e.spec.secret && it->second != e.value.text;
      out << name << "=" << it->second << " (" << e.value.source << (resolved ? ", resolved" : "") << ")\n";
      continue;
    }
    const bool hide = e.spec.secret && !e.value.text.empty();
    out << name << "=" << (hide ? "***" : e.value.text) << " (" << e.value.source << ")\n";
  }
  return out.str();
}

Settings load_settings(const std::vector<OptionSpec>& specs, const std::map<std::string, std::string>& flags,
                       std::string config_path, const std::string& env_prefix) {
  const auto env = process_env();
  if (config_path.empty()) config_path = env(env_prefix + "_CONFIG").value_or("");
  nlohmann::json file;
  if (!config_path.empty()) file = read_json_file(config_path);
  return Settings::resolve(specs, config_path.empty() ? nullptr : &file, config_path, env, env_prefix, flags);
}

nlohmann::json read_json_file(const std::string& path) {
  const std::string text = read_text_file(path, "config file");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, out_of_range (e.g. 1e400)
    throw ConfigError("config file " + path + " is not valid JSON: " + e.what());
  }
}

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

void add_flags(CLI::App& app, const std::vector<OptionSpec>& specs, std::map<std::string, std::string>& flags) {
  for (const auto& spec : specs) {
    const std::string name = spec.name;
    const std::string help = spec.help + (spec.default_text.empty() ? "" : " [default: " + spec.default_text + "]");
    if (spec.kind == OptionKind::Boolean) {
      app.add_flag_function(
             flag_name(name), [&flags, name](int64_t count) { flags[name] = count > 0 ? "true" : "false"; }, help)
          ->disable_flag_override(false);
    } else {
      auto* option = app.add_option_function<std::string>(
          flag_name(name), [&flags, name](const std::string& v) { flags[name] = v; }, help);
      if (spec.kind == OptionKind::Integer) option->type_name("INT");
    }
  }
}

void add_version_flag(CLI::App& app, const std::string& program) {
  app.set_version_flag("--version", program + " " + EXPIRY_RELAY_VERSION);
}

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const std::string& program) {
  use_readable_help(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    const auto unknown = unknown_command_message(app);
    std::cerr << program << ": " << (unknown ? *unknown : std::string(e.what())) << "\nrun '" << program
              << " --help' for usage\n";
    return 2;
  }
  return std::nullopt;
}

}  // namespace expiry
