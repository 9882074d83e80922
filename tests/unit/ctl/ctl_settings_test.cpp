// Unit tests of expiry-ctl's settings resolution (src/ctl/ctl_settings.h): the relay's stream
// and group come from the same layers as the relay reads them (flag > env > file > default).
#include "ctl/ctl_settings.h"

#include <unistd.h>

#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "config/relay_config.h"

namespace expiry {
namespace {

using Env = std::map<std::string, std::string>;

EnvLookup lookup(const Env& env) {
  return [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

// A temp config file holding `contents`, removed on destruction.
class TempConfig {
 public:
  explicit TempConfig(const std::string& contents) {
    char tmpl[] = "/tmp/expiry_ctl_settings_test_XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    close(fd);
    path_ = tmpl;
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempConfig() { unlink(path_.c_str()); }
  TempConfig(const TempConfig&) = delete;
  TempConfig& operator=(const TempConfig&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

CtlTarget resolve(const std::map<std::string, std::string>& flags, const Env& env = {},
                  const std::string& config_path = "") {
  GlobalOptions options;
  options.flags = flags;
  options.config_path = config_path;
  return resolve_target(options, lookup(env));
}

std::string resolve_error(const std::map<std::string, std::string>& flags, const Env& env = {},
                          const std::string& config_path = "") {
  try {
    resolve(flags, env, config_path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(CtlSettings, DefaultsAreTheRelaysDefaults) {
  const CtlTarget t = resolve({});
  EXPECT_EQ(t.ns, "expiry");
  EXPECT_EQ(t.stream, "expiry:stream");
  EXPECT_EQ(t.group, "workers");
  // The same as the relay would resolve with no settings at all.
  const RelayConfig relay = relay_config_from(
      Settings::resolve(relay_option_specs(), nullptr, "", lookup({}), kEnvPrefix, {}));
  EXPECT_EQ(t.stream, relay.stream);
  EXPECT_EQ(t.group, relay.group);
}

TEST(CtlSettings, TheDefaultStreamFollowsTheNamespace) {
  EXPECT_EQ(resolve({{"namespace", "shop"}}).stream, "shop:stream");
  EXPECT_EQ(resolve({}, {{"EXPIRY_RELAY_NAMESPACE", "env-ns"}}).stream, "env-ns:stream");
  EXPECT_EQ(resolve({{"stream", ""}}, {{"EXPIRY_RELAY_STREAM", "from-env"}}).stream, "expiry:stream")
      << "an empty --stream means the default, as for the relay";
}

TEST(CtlSettings, StreamAndGroupFromTheRelaysConfigFile) {
  const TempConfig file(R"({"namespace": "shop", "stream": "shop:fired", "group": "billing",
                            "sweep_batch": 50, "log_level": "debug", "metrics_port": 9100})");
  const CtlTarget t = resolve({}, {}, file.path());
  EXPECT_EQ(t.ns, "shop");
  EXPECT_EQ(t.stream, "shop:fired");
  EXPECT_EQ(t.group, "billing");
  // The file named by EXPIRY_RELAY_CONFIG is read the same way.
  EXPECT_EQ(resolve({}, {{"EXPIRY_RELAY_CONFIG", file.path()}}).stream, "shop:fired");
}

TEST(CtlSettings, FlagBeatsEnvBeatsFile) {
  const TempConfig file(R"({"stream": "file:s", "group": "file-g"})");
  const Env env = {{"EXPIRY_RELAY_STREAM", "env:s"}, {"EXPIRY_RELAY_GROUP", "env-g"}};
  const CtlTarget from_env = resolve({}, env, file.path());
  EXPECT_EQ(from_env.stream, "env:s");
  EXPECT_EQ(from_env.group, "env-g");
  const CtlTarget from_flags = resolve({{"stream", "flag:s"}, {"group", "flag-g"}}, env, file.path());
  EXPECT_EQ(from_flags.stream, "flag:s");
  EXPECT_EQ(from_flags.group, "flag-g");
  const CtlTarget mixed = resolve({{"group", "flag-g"}}, {{"EXPIRY_RELAY_STREAM", "env:s"}}, file.path());
  EXPECT_EQ(mixed.stream, "env:s");
  EXPECT_EQ(mixed.group, "flag-g");
}

TEST(CtlSettings, BadStreamOrGroupNamesItsSource) {
  const TempConfig file(R"({"stream": "expiry:{0}:task:x"})");
  std::string err = resolve_error({}, {}, file.path());
  EXPECT_TRUE(contains(err, "config file " + file.path())) << err;
  EXPECT_TRUE(contains(err, "task key space")) << err;
  err = resolve_error({}, {{"EXPIRY_RELAY_GROUP", ""}});
  EXPECT_TRUE(contains(err, "env EXPIRY_RELAY_GROUP: group must not be empty")) << err;
  err = resolve_error({{"group", ""}});
  EXPECT_TRUE(contains(err, "flag --group: group must not be empty")) << err;
  const TempConfig wrong_type(R"({"group": 5})");
  err = resolve_error({}, {}, wrong_type.path());
  EXPECT_TRUE(contains(err, "group must be a string")) << err;
}

TEST(CtlSettings, TyposInASharedFileAreStillErrors) {
  const TempConfig file(R"({"stream": "s", "strem": "t"})");
  EXPECT_TRUE(contains(resolve_error({}, {}, file.path()), "unknown key 'strem'"));
}

TEST(CtlSettings, KeysOnlyDropsTheRelaysOtherOptions) {
  const auto kept = ctl_keys_only(nlohmann::json::parse(
      R"({"redis_url": "redis://h:1/0", "namespace": "n", "stream": "s", "group": "g", "sweep_batch": 5,
          "instance": "i", "unknown": 1})"));
  EXPECT_EQ(kept, nlohmann::json::parse(
                      R"({"redis_url": "redis://h:1/0", "namespace": "n", "stream": "s", "group": "g",
                          "unknown": 1})"));
  EXPECT_EQ(ctl_keys_only(nlohmann::json::array()), nlohmann::json::array());
}

}  // namespace
}  // namespace expiry
