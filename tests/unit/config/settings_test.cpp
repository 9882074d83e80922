// Unit tests of the layered settings (src/config/settings.h): precedence flag > env > file > default,
// type checks, bounds, unknown keys, and the secret-redacting describe().
#include "config/settings.h"

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"

namespace expiry {
namespace {

using nlohmann::json;
using Flags = std::map<std::string, std::string>;
using Env = std::map<std::string, std::string>;

const std::string kPrefix = "TEST_APP";
const std::string kFile = "app.json";

std::vector<OptionSpec> specs() {
  return {
      {"name", OptionKind::String, "a string", "dflt"},
      {"sweep_interval_ms", OptionKind::Integer, "an integer", "1000", 10, 3600000},
      {"verbose", OptionKind::Boolean, "a boolean", "false"},
      {"token", OptionKind::String, "a secret", "default-token", INT64_MIN, INT64_MAX, true},
      {"offset", OptionKind::Integer, "an unbounded integer", "0"},
  };
}

// A fake environment: only the variables in `vars` exist.
EnvLookup fake_env(Env vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Settings resolve(const json* file, const Env& env = {}, const Flags& flags = {}) {
  return Settings::resolve(specs(), file, kFile, fake_env(env), kPrefix, flags);
}

// The ConfigError message of resolving these layers, or "" if they resolved.
std::string resolve_error(const json* file, const Env& env = {}, const Flags& flags = {}) {
  try {
    resolve(file, env, flags);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------- names

TEST(Settings, FlagName) {
  EXPECT_EQ(flag_name("sweep_interval_ms"), "--sweep-interval-ms");
  EXPECT_EQ(flag_name("namespace"), "--namespace");
  EXPECT_EQ(flag_name("a_b_c"), "--a-b-c");
}

TEST(Settings, EnvName) {
  EXPECT_EQ(env_name("EXPIRY_RELAY", "sweep_interval_ms"), "EXPIRY_RELAY_SWEEP_INTERVAL_MS");
  EXPECT_EQ(env_name("EXPIRY_RELAY", "namespace"), "EXPIRY_RELAY_NAMESPACE");
  EXPECT_EQ(env_name("P", "log_level"), "P_LOG_LEVEL");
}

// ---------------------------------------------------------------- precedence

TEST(Settings, DefaultsWhenNoLayerSetsAnything) {
  auto s = resolve(nullptr);
  EXPECT_EQ(s.text("name"), "dflt");
  EXPECT_EQ(s.integer("sweep_interval_ms"), 1000);
  EXPECT_EQ(s.text("sweep_interval_ms"), "1000");
  EXPECT_FALSE(s.boolean("verbose"));
  EXPECT_EQ(s.text("verbose"), "false");
  for (const char* n : {"name", "sweep_interval_ms", "verbose", "token", "offset"}) {
    EXPECT_EQ(s.source(n), "default") << n;
  }
}

TEST(Settings, FileOverridesDefault) {
  const json file = {{"name", "from-file"}, {"sweep_interval_ms", 2000}, {"verbose", true}};
  auto s = resolve(&file);
  EXPECT_EQ(s.text("name"), "from-file");
  EXPECT_EQ(s.integer("sweep_interval_ms"), 2000);
  EXPECT_TRUE(s.boolean("verbose"));
  EXPECT_EQ(s.source("name"), "config file app.json");
  EXPECT_EQ(s.source("sweep_interval_ms"), "config file app.json");
  EXPECT_EQ(s.source("verbose"), "config file app.json");
  EXPECT_EQ(s.source("token"), "default");
}

TEST(Settings, EnvOverridesFileAndDefault) {
  const json file = {{"name", "from-file"}, {"sweep_interval_ms", 2000}};
  auto s = resolve(&file, {{"TEST_APP_NAME", "from-env"}, {"TEST_APP_SWEEP_INTERVAL_MS", "3000"}});
  EXPECT_EQ(s.text("name"), "from-env");
  EXPECT_EQ(s.integer("sweep_interval_ms"), 3000);
  EXPECT_EQ(s.source("name"), "env TEST_APP_NAME");
  EXPECT_EQ(s.source("sweep_interval_ms"), "env TEST_APP_SWEEP_INTERVAL_MS");

  // Env without a file overrides the default.
  auto t = resolve(nullptr, {{"TEST_APP_NAME", "from-env"}});
  EXPECT_EQ(t.text("name"), "from-env");
  EXPECT_EQ(t.source("name"), "env TEST_APP_NAME");
  EXPECT_EQ(t.source("sweep_interval_ms"), "default");
}

TEST(Settings, FlagOverridesEnvFileAndDefault) {
  const json file = {{"name", "from-file"}, {"sweep_interval_ms", 2000}};
  auto s = resolve(&file, {{"TEST_APP_NAME", "from-env"}, {"TEST_APP_SWEEP_INTERVAL_MS", "3000"}},
                   {{"name", "from-flag"}, {"sweep_interval_ms", "4000"}});
  EXPECT_EQ(s.text("name"), "from-flag");
  EXPECT_EQ(s.integer("sweep_interval_ms"), 4000);
  EXPECT_EQ(s.source("name"), "flag --name");
  EXPECT_EQ(s.source("sweep_interval_ms"), "flag --sweep-interval-ms");

  // A flag alone overrides the default.
  auto t = resolve(nullptr, {}, {{"sweep_interval_ms", "50"}});
  EXPECT_EQ(t.integer("sweep_interval_ms"), 50);
  EXPECT_EQ(t.source("sweep_interval_ms"), "flag --sweep-interval-ms");
}

TEST(Settings, EachOptionTakesItsHighestLayerIndependently) {
  const json file = {{"name", "from-file"}, {"sweep_interval_ms", 2000}};
  auto s = resolve(&file, {{"TEST_APP_SWEEP_INTERVAL_MS", "3000"}}, {{"verbose", "true"}});
  EXPECT_EQ(s.text("name"), "from-file");
  EXPECT_EQ(s.source("name"), "config file app.json");
  EXPECT_EQ(s.integer("sweep_interval_ms"), 3000);
  EXPECT_EQ(s.source("sweep_interval_ms"), "env TEST_APP_SWEEP_INTERVAL_MS");
  EXPECT_TRUE(s.boolean("verbose"));
  EXPECT_EQ(s.source("verbose"), "flag --verbose");
  EXPECT_EQ(s.text("token"), "default-token");
  EXPECT_EQ(s.source("token"), "default");
}

TEST(Settings, EnvLookupUsesThePrefix) {
  // Variables with another prefix, or without one, are ignored.
  auto s = resolve(nullptr, {{"NAME", "x"}, {"OTHER_NAME", "y"}, {"TEST_APPNAME", "z"}, {"test_app_name", "w"}});
  EXPECT_EQ(s.text("name"), "dflt");
  EXPECT_EQ(s.source("name"), "default");
}

TEST(Settings, EmptyEnvValueSetsAnEmptyString) {
  auto s = resolve(nullptr, {{"TEST_APP_NAME", ""}});
  EXPECT_EQ(s.text("name"), "");
  EXPECT_EQ(s.source("name"), "env TEST_APP_NAME");
}

TEST(Settings, UnknownFlagIsAnError) {
  const std::string msg = resolve_error(nullptr, {}, {{"no_such_thing", "1"}});
  EXPECT_TRUE(contains(msg, "--no-such-thing")) << msg;
}

// ---------------------------------------------------------------- JSON file errors

TEST(Settings, UnknownJsonKeyIsAnError) {
  const json file = {{"name", "x"}, {"sweep_intervall_ms", 5}};
  const std::string msg = resolve_error(&file);
  ASSERT_FALSE(msg.empty());
  EXPECT_TRUE(contains(msg, "unknown key 'sweep_intervall_ms'")) << msg;
  EXPECT_TRUE(contains(msg, "config file app.json")) << msg;
}

TEST(Settings, NonObjectJsonIsAnError) {
  for (const json& file : {json::array({1, 2}), json("text"), json(5), json(nullptr), json(true)}) {
    const std::string msg = resolve_error(&file);
    EXPECT_TRUE(contains(msg, "JSON object")) << file.dump() << ": " << msg;
    EXPECT_TRUE(contains(msg, "app.json")) << msg;
  }
}

TEST(Settings, EmptyJsonObjectIsFine) {
  const json file = json::object();
  auto s = resolve(&file);
  EXPECT_EQ(s.source("name"), "default");
}

TEST(Settings, StringForIntegerIsAnError) {
  const json file = {{"sweep_interval_ms", "2000"}};
  const std::string msg = resolve_error(&file);
  EXPECT_TRUE(contains(msg, "sweep_interval_ms must be an integer")) << msg;
  EXPECT_TRUE(contains(msg, "config file app.json")) << msg;
}

TEST(Settings, FloatForIntegerIsAnError) {
  const json file = {{"sweep_interval_ms", 2000.5}};
  EXPECT_TRUE(contains(resolve_error(&file), "must be an integer"));
  const json whole = {{"sweep_interval_ms", 2000.0}};
  EXPECT_TRUE(contains(resolve_error(&whole), "must be an integer"));
}

TEST(Settings, IntegerForStringIsAnError) {
  const json file = {{"name", 42}};
  const std::string msg = resolve_error(&file);
  EXPECT_TRUE(contains(msg, "name must be a string")) << msg;
  EXPECT_TRUE(contains(msg, "config file app.json")) << msg;
}

TEST(Settings, NumberForBooleanIsAnError) {
  for (const json& v : {json(1), json(0), json(1.0), json("true"), json(nullptr)}) {
    const json file = {{"verbose", v}};
    const std::string msg = resolve_error(&file);
    EXPECT_TRUE(contains(msg, "verbose must be true or false")) << v.dump() << ": " << msg;
  }
}

TEST(Settings, NullOrArrayForStringIsAnError) {
  for (const json& v : {json(nullptr), json::array({"a"}), json::object(), json(true)}) {
    const json file = {{"name", v}};
    EXPECT_TRUE(contains(resolve_error(&file), "name must be a string")) << v.dump();
  }
}

TEST(Settings, NegativeJsonIntegerForUnboundedOption) {
  const json file = {{"offset", -42}};
  auto s = resolve(&file);
  EXPECT_EQ(s.integer("offset"), -42);
  EXPECT_EQ(s.text("offset"), "-42");
}

TEST(Settings, JsonIntegerAboveInt64IsAnError) {
  // An unsigned JSON number above INT64_MAX must not wrap to a negative value.
  const json file = json::parse(R"({"offset": 18446744073709551615})");
  EXPECT_THROW(resolve(&file), ConfigError);
}

// ---------------------------------------------------------------- integer parsing and bounds

TEST(Settings, IntegerBoundsAreInclusive) {
  EXPECT_EQ(resolve(nullptr, {}, {{"sweep_interval_ms", "10"}}).integer("sweep_interval_ms"), 10);
  EXPECT_EQ(resolve(nullptr, {}, {{"sweep_interval_ms", "3600000"}}).integer("sweep_interval_ms"), 3600000);
}

TEST(Settings, IntegerBelowMinNamesTheSource) {
  const json file = {{"sweep_interval_ms", 9}};
  std::string msg = resolve_error(&file);
  EXPECT_TRUE(contains(msg, "config file app.json")) << msg;
  EXPECT_TRUE(contains(msg, "sweep_interval_ms must be between 10 and 3600000")) << msg;

  msg = resolve_error(nullptr, {{"TEST_APP_SWEEP_INTERVAL_MS", "9"}});
  EXPECT_TRUE(contains(msg, "env TEST_APP_SWEEP_INTERVAL_MS")) << msg;
  EXPECT_TRUE(contains(msg, "between 10 and 3600000")) << msg;

  msg = resolve_error(nullptr, {}, {{"sweep_interval_ms", "-5"}});
  EXPECT_TRUE(contains(msg, "flag --sweep-interval-ms")) << msg;
  EXPECT_TRUE(contains(msg, "between 10 and 3600000")) << msg;
}

TEST(Settings, IntegerAboveMaxNamesTheSource) {
  std::string msg = resolve_error(nullptr, {}, {{"sweep_interval_ms", "3600001"}});
  EXPECT_TRUE(contains(msg, "flag --sweep-interval-ms")) << msg;
  EXPECT_TRUE(contains(msg, "got 3600001")) << msg;

  msg = resolve_error(nullptr, {{"TEST_APP_SWEEP_INTERVAL_MS", "99999999"}});
  EXPECT_TRUE(contains(msg, "env TEST_APP_SWEEP_INTERVAL_MS")) << msg;
}

TEST(Settings, NonNumericIntegerNamesTheSource) {
  for (const char* bad : {"", "abc", "12x", "1.5", "1e3", " 12", "12 ", "+12", "-", "0x10"}) {
    std::string msg = resolve_error(nullptr, {{"TEST_APP_SWEEP_INTERVAL_MS", bad}});
    EXPECT_TRUE(contains(msg, "env TEST_APP_SWEEP_INTERVAL_MS")) << "'" << bad << "': " << msg;
    EXPECT_TRUE(contains(msg, "must be an integer")) << "'" << bad << "': " << msg;
    msg = resolve_error(nullptr, {}, {{"sweep_interval_ms", bad}});
    EXPECT_TRUE(contains(msg, "flag --sweep-interval-ms")) << "'" << bad << "': " << msg;
  }
}

TEST(Settings, IntegerTextIsCanonicalised) {
  auto s = resolve(nullptr, {}, {{"sweep_interval_ms", "0000250"}});
  EXPECT_EQ(s.integer("sweep_interval_ms"), 250);
  EXPECT_EQ(s.text("sweep_interval_ms"), "250");
}

TEST(Settings, UnboundedIntegerAcceptsInt64Max) {
  auto s = resolve(nullptr, {}, {{"offset", "9223372036854775807"}});
  EXPECT_EQ(s.integer("offset"), INT64_MAX);
  EXPECT_EQ(resolve(nullptr, {}, {{"offset", "-999999999999999999"}}).integer("offset"), -999999999999999999LL);
}

TEST(Settings, IntegerAboveInt64MaxIsAnError) {
  // Values past the int64 range are errors, not wrapped numbers.
  EXPECT_THROW(resolve(nullptr, {}, {{"offset", "9223372036854775808"}}), ConfigError);
  EXPECT_THROW(resolve(nullptr, {}, {{"offset", "9999999999999999999"}}), ConfigError);
  // With bounds the wrapped value happens to be rejected, but the outcome must not depend on that.
  EXPECT_THROW(resolve(nullptr, {}, {{"sweep_interval_ms", "9999999999999999999"}}), ConfigError);
}

// ---------------------------------------------------------------- booleans

TEST(Settings, BooleanParsing) {
  for (const char* yes : {"true", "TRUE", "True", "1", "yes", "YES", "on", "On"}) {
    auto s = resolve(nullptr, {{"TEST_APP_VERBOSE", yes}});
    EXPECT_TRUE(s.boolean("verbose")) << yes;
    EXPECT_EQ(s.text("verbose"), "true") << yes;
  }
  for (const char* no : {"false", "FALSE", "0", "no", "No", "off", "OFF"}) {
    auto s = resolve(nullptr, {{"TEST_APP_VERBOSE", no}}, {});
    EXPECT_FALSE(s.boolean("verbose")) << no;
    EXPECT_EQ(s.text("verbose"), "false") << no;
  }
  EXPECT_TRUE(resolve(nullptr, {}, {{"verbose", "yes"}}).boolean("verbose"));
  EXPECT_FALSE(resolve(nullptr, {{"TEST_APP_VERBOSE", "1"}}, {{"verbose", "0"}}).boolean("verbose"));
}

TEST(Settings, BadBooleanIsAnError) {
  for (const char* bad : {"maybe", "", "2", "-1", "y", "n", "t", "truee", " true"}) {
    std::string msg = resolve_error(nullptr, {{"TEST_APP_VERBOSE", bad}});
    EXPECT_TRUE(contains(msg, "env TEST_APP_VERBOSE")) << "'" << bad << "': " << msg;
    EXPECT_TRUE(contains(msg, "verbose must be true or false")) << "'" << bad << "': " << msg;
  }
  const std::string msg = resolve_error(nullptr, {}, {{"verbose", "maybe"}});
  EXPECT_TRUE(contains(msg, "flag --verbose")) << msg;
  EXPECT_TRUE(contains(msg, "'maybe'")) << msg;
}

TEST(Settings, BadDefaultIsReportedAsDefault) {
  const std::vector<OptionSpec> bad = {{"n", OptionKind::Integer, "h", "ten", 0, 100}};
  try {
    Settings::resolve(bad, nullptr, "", fake_env({}), kPrefix, {});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), "default")) << e.what();
  }
}

// ---------------------------------------------------------------- describe()

TEST(Settings, DescribeListsEveryOptionWithItsSource) {
  const json file = {{"name", "from-file"}};
  auto s = resolve(&file, {{"TEST_APP_SWEEP_INTERVAL_MS", "3000"}}, {{"verbose", "on"}});
  const std::string d = s.describe();
  EXPECT_TRUE(contains(d, "name=from-file (config file app.json)\n")) << d;
  EXPECT_TRUE(contains(d, "sweep_interval_ms=3000 (env TEST_APP_SWEEP_INTERVAL_MS)\n")) << d;
  EXPECT_TRUE(contains(d, "verbose=true (flag --verbose)\n")) << d;
  EXPECT_TRUE(contains(d, "offset=0 (default)\n")) << d;
}

TEST(Settings, DescribeRedactsSecretOptions) {
  for (int layer = 0; layer < 4; ++layer) {
    const json file = {{"token", "file-s3cret"}};
    Env env;
    Flags flags;
    if (layer >= 2) env["TEST_APP_TOKEN"] = "env-s3cret";
    if (layer >= 3) flags["token"] = "flag-s3cret";
    auto s = resolve(layer >= 1 ? &file : nullptr, env, flags);
    const std::string d = s.describe();
    EXPECT_TRUE(contains(d, "token=*** (")) << d;
    EXPECT_FALSE(contains(d, "s3cret")) << d;
    EXPECT_FALSE(contains(d, "default-token")) << d;
  }
  // The value itself is still available to the program.
  auto s = resolve(nullptr, {}, {{"token", "flag-s3cret"}});
  EXPECT_EQ(s.text("token"), "flag-s3cret");
}

TEST(Settings, ValueErrorsDoNotEchoSecrets) {
  // String options never fail to parse, so a secret can only leak through describe(); an
  // unknown key error names the key, never a value.
  const json file = {{"tokn", "s3cret"}};
  const std::string msg = resolve_error(&file);
  EXPECT_FALSE(msg.empty());
  EXPECT_FALSE(contains(msg, "s3cret")) << msg;
}

TEST(Settings, UnknownOptionLookupIsALogicError) {
  auto s = resolve(nullptr);
  EXPECT_THROW(s.text("nope"), std::logic_error);
  EXPECT_THROW(s.source("nope"), std::logic_error);
}

// ---------------------------------------------------------------- read_json_file

class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char tmpl[] = "/tmp/expiry_settings_test_XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    close(fd);
    path_ = tmpl;
    std::ofstream(path_) << contents;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Settings, ReadJsonFile) {
  TempFile f(R"({"name": "n", "sweep_interval_ms": 20})");
  const json j = read_json_file(f.path());
  auto s = Settings::resolve(specs(), &j, f.path(), fake_env({}), kPrefix, {});
  EXPECT_EQ(s.text("name"), "n");
  EXPECT_EQ(s.integer("sweep_interval_ms"), 20);
  EXPECT_EQ(s.source("name"), "config file " + f.path());
}

TEST(Settings, ReadJsonFileErrorsNameTheFile) {
  TempFile f(R"({"name": )");
  try {
    read_json_file(f.path());
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), f.path())) << e.what();
    EXPECT_TRUE(contains(e.what(), "not valid JSON")) << e.what();
  }
  const std::string missing = f.path() + ".missing";
  try {
    read_json_file(missing);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), missing)) << e.what();
  }
}


// A directory, a path through a file, a file whose read fails (EIO) and, when not running as
// root, a file without read permission: a ConfigError naming the file, never another exception.
TEST(Settings, ReadJsonFileRejectsDirectoriesAndUnreadableFiles) {
  auto error_of = [](const std::string& path) -> std::string {
    try {
      read_json_file(path);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  char dir_tmpl[] = "/tmp/expiry_settings_test_dir_XXXXXX";
  ASSERT_NE(mkdtemp(dir_tmpl), nullptr);
  const std::string dir = dir_tmpl;
  EXPECT_EQ(error_of(dir), "config file " + dir + " is a directory");
  EXPECT_EQ(error_of(dir + "/"), "config file " + dir + "/ is a directory");
  rmdir(dir.c_str());

  TempFile f(R"({"name": "n"})");
  EXPECT_EQ(error_of(f.path() + "/x"), "cannot read config file " + f.path() + "/x: Not a directory");
  EXPECT_EQ(error_of("/proc/self/mem"), "cannot read config file /proc/self/mem: Input/output error");
  EXPECT_TRUE(contains(error_of(f.path() + ".missing"), "cannot read config file " + f.path() +
                                                            ".missing: No such file or directory"));
  if (geteuid() != 0) {  // root reads a mode-000 file anyway
    ASSERT_EQ(chmod(f.path().c_str(), 0), 0);
    EXPECT_EQ(error_of(f.path()), "cannot read config file " + f.path() + ": Permission denied");
  }
}

}  // namespace
}  // namespace expiry

// ---------------------------------------------------------------- what programs print

namespace expiry {
namespace {

TEST(SettingsDescribe, ShowsResolvedValuesAndRedactsOnlyWhatIsSecret) {
  const json file = {{"name", ""}};
  const Settings s = Settings::resolve(specs(), &file, "cfg.json", [](const std::string&) { return std::nullopt; },
                                       "P", {});
  const std::string plain = s.describe();
  EXPECT_NE(plain.find("name= (config file cfg.json)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("token=*** (default)"), std::string::npos) << plain;
  const std::string shown = s.describe({{"name", "resolved-name"}, {"token", "redis://127.0.0.1:6379/0"}});
  EXPECT_NE(shown.find("name=resolved-name (config file cfg.json, resolved)"), std::string::npos) << shown;
  // A secret option shown through the program's own redaction (a URL without a password).
  EXPECT_NE(shown.find("token=redis://127.0.0.1:6379/0 (default)"), std::string::npos) << shown;
}

// Runs parse_command_line on `args` (program name first).
int parse_exit(std::vector<std::string> args, std::string* out = nullptr) {
  CLI::App app{"test program"};
  std::map<std::string, std::string> flags;
  add_flags(app, specs(), flags);
  add_version_flag(app, "test-program");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  auto code = parse_command_line(app, static_cast<int>(argv.size()), argv.data(), "test-program");
  const std::string printed = testing::internal::GetCapturedStdout();
  if (out) *out = printed;
  return code.value_or(-1);
}

TEST(CommandLine, UsageErrorsExitTwoWhateverCli11WouldReturn) {
  EXPECT_EQ(parse_exit({"p", "--no-such-flag"}), 2);                 // CLI11: 109 (ExtrasError)
  EXPECT_EQ(parse_exit({"p", "--sweep-interval-ms"}), 2);            // missing value
  EXPECT_EQ(parse_exit({"p", "stray"}), 2);
  EXPECT_EQ(parse_exit({"p", "--name", "x"}), -1) << "valid: go on";
}

TEST(CommandLine, HelpAndVersionExitZeroAndPrint) {
  std::string out;
  EXPECT_EQ(parse_exit({"p", "--version"}, &out), 0);
  EXPECT_EQ(out.rfind("test-program ", 0), 0u) << out;
  EXPECT_NE(out.find('.'), std::string::npos) << "a version number: " << out;
  EXPECT_EQ(parse_exit({"p", "--help"}, &out), 0);
  EXPECT_NE(out.find("--sweep-interval-ms MS "), std::string::npos) << "what to give, not a type name:\n" << out;
  EXPECT_EQ(out.find("--sweep-interval-ms TEXT"), std::string::npos) << out;
  EXPECT_EQ(out.find("--sweep-interval-ms INT"), std::string::npos) << out;
}

}  // namespace
}  // namespace expiry
