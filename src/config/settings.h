// Layered settings: defaults < JSON config file < environment < command-line flags.
// Pure: the environment and file contents are passed in, so precedence is unit-testable.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace CLI {
class App;
}

namespace expiry {

enum class OptionKind { String, Integer, Boolean };

struct OptionSpec {
  std::string name;           // JSON key and flag stem: "sweep_interval_ms" -> --sweep-interval-ms
  OptionKind kind;
  std::string help;
  std::string default_text;   // shown in --help and used when no layer sets the option
  int64_t min = INT64_MIN;    // bounds for Integer options
  int64_t max = INT64_MAX;
  bool secret = false;        // never echoed in messages or dumps
};

struct SettingValue {
  std::string text;    // canonical text: integers in decimal, booleans "true"/"false"
  std::string source;  // "default", "config file x.json", "env EXPIRY_RELAY_X", "flag --x"
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

class Settings {
 public:
  // Merges the layers; throws ConfigError for unknown JSON keys, wrong JSON types, and values
  // that do not parse or are out of range (naming the source).
  static Settings resolve(const std::vector<OptionSpec>& specs, const nlohmann::json* file,
                          const std::string& file_name, const EnvLookup& env, const std::string& env_prefix,
                          const std::map<std::string, std::string>& flags);

  const std::string& text(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  bool boolean(const std::string& name) const;
  const std::string& source(const std::string& name) const;
  // Whether `name` is one of the options resolved (a program may leave some of a set out).
  bool has(const std::string& name) const { return entries_.count(name) > 0; }
  // "name=value (source)" lines, secrets redacted. `shown` replaces the value of an option by
  // what the program made of it: a URL with only its password redacted, a default that was
  // resolved (an empty stream becomes NAMESPACE:stream); such lines say "resolved".
  std::string describe(const std::map<std::string, std::string>& shown = {}) const;

 private:
  struct Entry {
    OptionSpec spec;
    SettingValue value;
  };
  const Entry& entry(const std::string& name) const;
  std::map<std::string, Entry> entries_;
};

std::string flag_name(const std::string& option_name);  // "sweep_interval_ms" -> "--sweep-interval-ms"
std::string env_name(const std::string& prefix, const std::string& option_name);  // -> PREFIX_SWEEP_INTERVAL_MS

// The usual resolution of a program's settings: the JSON file is `config_path`, or else the
// file named by env <env_prefix>_CONFIG, or none; then Settings::resolve with the process env.
Settings load_settings(const std::vector<OptionSpec>& specs, const std::map<std::string, std::string>& flags,
                       std::string config_path, const std::string& env_prefix);

// Reads and parses a JSON config file; throws ConfigError with the file name and position, and
// for a file that cannot be read (missing, a directory, permission denied, I/O error).
nlohmann::json read_json_file(const std::string& path);

// The process environment as an EnvLookup.
EnvLookup process_env();

// Registers one CLI11 option per spec on `app`, writing given values into `flags`
// (booleans as flags; "--x=false" is accepted too; integers typed INT, which --help shows as N
// or as what their name says: config/help_formatter.h).
void add_flags(CLI::App& app, const std::vector<OptionSpec>& specs, std::map<std::string, std::string>& flags);

// Adds --version to `app`: "<program> <project version> (git <commit>)".
void add_version_flag(CLI::App& app, const std::string& program);

// Parses the command line the same way in every program, with --help in words
// (config/help_formatter.h): nullopt to go on; otherwise the exit code: 0 after --help or
// --version (printed on stdout), 2 after a usage error (on stderr: the error, as a did-you-mean
// for a mistyped command (config/unknown_command.h), and a hint), whatever CLI11's own code for
// it would be.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const std::string& program);

}  // namespace expiry
