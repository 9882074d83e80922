// Unit tests of the relay's option table and validation (src/config/relay_config.h).
#include "config/relay_config.h"

#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"

namespace expiry {
namespace {

using Flags = std::map<std::string, std::string>;
using Env = std::map<std::string, std::string>;
using std::chrono::milliseconds;

Settings settings(const Flags& flags = {}, const Env& env = {}) {
  EnvLookup lookup = [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return Settings::resolve(relay_option_specs(), nullptr, "", lookup, "EXPIRY_RELAY", flags);
}

RelayConfig config(const Flags& flags = {}, const Env& env = {}) { return relay_config_from(settings(flags, env)); }

// The ConfigError message of relay_config_from for these flags, or "" if it succeeded.
std::string config_error(const Flags& flags, const Env& env = {}) {
  try {
    config(flags, env);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A temp file holding `contents`, removed on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char tmpl[] = "/tmp/expiry_relay_config_test_XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    close(fd);
    path_ = tmpl;
    std::ofstream out(path_, std::ios::binary);
    out << contents;
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---------------------------------------------------------------- option table

TEST(RelayConfig, OptionTableHasUniqueNamesAndResolvableDefaults) {
  const auto specs = relay_option_specs();
  std::set<std::string> names;
  for (const auto& s : specs) EXPECT_TRUE(names.insert(s.name).second) << "duplicate option " << s.name;
  for (const char* n : {"redis_url", "password_file", "namespace", "stream", "group", "sweep_interval_ms",
                        "sweep_batch", "sweep_coalesce_ms", "sweep_pipeline", "connect_timeout_ms", "watchdog_interval_ms", "watchdog_timeout_ms",
                        "reconnect_initial_ms", "reconnect_max_ms", "max_inflight_claims", "require_notifications",
                        "event_claims", "next_due_timer", "log_format", "log_level", "instance"}) {
    EXPECT_EQ(names.count(n), 1u) << "missing option " << n;
  }
  EXPECT_NO_THROW(settings());
}

TEST(RelayConfig, ConnectionOptionsAreAPrefixOfRelayOptions) {
  const auto conn = connection_option_specs();
  const auto relay = relay_option_specs();
  ASSERT_GE(relay.size(), conn.size());
  for (size_t i = 0; i < conn.size(); ++i) EXPECT_EQ(relay[i].name, conn[i].name);
}

TEST(RelayConfig, RedisUrlIsSecretInDescribe) {
  auto s = settings({{"redis_url", "redis://u:hunter2@h:6379/0"}});
  const std::string d = s.describe();
  EXPECT_FALSE(contains(d, "hunter2")) << d;
  EXPECT_TRUE(contains(d, "redis_url=*** (flag --redis-url)")) << d;
}

// ---------------------------------------------------------------- defaults

TEST(RelayConfig, Defaults) {
  const RelayConfig c = config();
  EXPECT_EQ(c.redis.host, "127.0.0.1");
  EXPECT_EQ(c.redis.port, 6379);
  EXPECT_EQ(c.redis.db, 0);
  EXPECT_EQ(c.redis.user, "");
  EXPECT_EQ(c.redis.password, "");
  EXPECT_EQ(c.ns, "expiry");
  EXPECT_EQ(c.stream, "expiry:stream");
  EXPECT_EQ(c.group, "workers");
  EXPECT_EQ(c.max_late_ms, 0) << "no lateness limit: order timeouts always fire";
  EXPECT_EQ(c.dead_stream, "expiry:stream:dead");
  EXPECT_EQ(c.sweep_interval, milliseconds(10000));
  EXPECT_EQ(c.sweep_batch, 100);
  EXPECT_EQ(c.sweep_pipeline, 4);
  EXPECT_EQ(c.stream_retention, milliseconds(3600000));
  EXPECT_EQ(c.stream_trim_interval, milliseconds(10000));
  EXPECT_EQ(c.connect_timeout, milliseconds(2000));
  EXPECT_EQ(c.watchdog_interval, milliseconds(1000));
  EXPECT_EQ(c.watchdog_timeout, milliseconds(3000));
  EXPECT_EQ(c.health_probe_interval, milliseconds(5000));
  EXPECT_EQ(c.reconnect.initial, milliseconds(100));
  EXPECT_EQ(c.reconnect.max, milliseconds(5000));
  EXPECT_EQ(c.max_inflight_claims, 1000);
  EXPECT_FALSE(c.require_notifications);
  EXPECT_TRUE(c.event_claims);
  EXPECT_TRUE(c.next_due_timer);
  EXPECT_EQ(c.log_format, "text");
  EXPECT_EQ(c.log_level, "info");
}

TEST(RelayConfig, DefaultInstanceIsHostnameDashPid) {
  const RelayConfig c = config();
  const std::string suffix = "-" + std::to_string(getpid());
  ASSERT_GT(c.instance.size(), suffix.size());
  EXPECT_EQ(c.instance.substr(c.instance.size() - suffix.size()), suffix) << c.instance;
  for (char ch : c.instance) EXPECT_GT(static_cast<unsigned char>(ch), 0x20) << c.instance;
}

TEST(RelayConfig, ExplicitValues) {
  const RelayConfig c = config({{"redis_url", "redis://u:pw@cache:6390/4"},
                                {"group", "g1"},
                                {"stream", "out"},
                                {"sweep_interval_ms", "250"},
                                {"sweep_batch", "7"},
                                {"sweep_pipeline", "8"},
                                {"connect_timeout_ms", "500"},
                                {"watchdog_interval_ms", "200"},
                                {"watchdog_timeout_ms", "900"},
                                {"health_probe_interval_ms", "300"},
                                {"reconnect_initial_ms", "10"},
                                {"reconnect_max_ms", "10"},
                                {"max_inflight_claims", "3"},
                                {"require_notifications", "true"},
                                {"event_claims", "false"},
                                {"next_due_timer", "false"},
                                {"log_format", "json"},
                                {"log_level", "debug"},
                                {"instance", "relay-a"}});
  EXPECT_EQ(c.redis.host, "cache");
  EXPECT_EQ(c.redis.port, 6390);
  EXPECT_EQ(c.redis.db, 4);
  EXPECT_EQ(c.redis.user, "u");
  EXPECT_EQ(c.redis.password, "pw");
  EXPECT_EQ(c.stream, "out");
  EXPECT_EQ(c.group, "g1");
  EXPECT_EQ(c.sweep_interval, milliseconds(250));
  EXPECT_EQ(c.sweep_batch, 7);
  EXPECT_EQ(c.sweep_pipeline, 8);
  EXPECT_EQ(c.connect_timeout, milliseconds(500));
  EXPECT_EQ(c.watchdog_interval, milliseconds(200));
  EXPECT_EQ(c.watchdog_timeout, milliseconds(900));
  EXPECT_EQ(c.health_probe_interval, milliseconds(300));
  EXPECT_EQ(c.reconnect.initial, milliseconds(10));
  EXPECT_EQ(c.reconnect.max, milliseconds(10));
  EXPECT_EQ(c.max_inflight_claims, 3);
  EXPECT_TRUE(c.require_notifications);
  EXPECT_FALSE(c.event_claims);
  EXPECT_FALSE(c.next_due_timer);
  EXPECT_EQ(c.log_format, "json");
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.instance, "relay-a");
}

// ---------------------------------------------------------------- namespace and stream

TEST(RelayConfig, CustomNamespaceChangesTheDefaultStream) {
  const RelayConfig c = config({{"namespace", "billing"}});
  EXPECT_EQ(c.ns, "billing");
  EXPECT_EQ(c.stream, "billing:stream");

  const RelayConfig e = config({}, {{"EXPIRY_RELAY_NAMESPACE", "jobs.v2"}});
  EXPECT_EQ(e.ns, "jobs.v2");
  EXPECT_EQ(e.stream, "jobs.v2:stream");
}

TEST(RelayConfig, ExplicitStreamWinsOverTheNamespaceDefault) {
  const RelayConfig c = config({{"namespace", "billing"}, {"stream", "billing-out"}});
  EXPECT_EQ(c.stream, "billing-out");
}

TEST(RelayConfig, BadNamespaceIsAConfigError) {
  for (const char* ns : {"", "has space", "a:b", "a{b}", "a/b", "caf\xC3\xA9"}) {
    const std::string msg = config_error({{"namespace", ns}});
    EXPECT_TRUE(contains(msg, "flag --namespace")) << "'" << ns << "': " << msg;
  }
  EXPECT_FALSE(config_error({{"namespace", std::string(65, 'n')}}).empty());
  EXPECT_TRUE(config_error({{"namespace", std::string(64, 'n')}}).empty());
  const std::string msg = config_error({}, {{"EXPIRY_RELAY_NAMESPACE", "bad ns"}});
  EXPECT_TRUE(contains(msg, "env EXPIRY_RELAY_NAMESPACE")) << msg;
}

TEST(RelayConfig, EmptyGroupIsAConfigError) {
  const std::string msg = config_error({{"group", ""}});
  EXPECT_TRUE(contains(msg, "group")) << msg;
}

// ---------------------------------------------------------------- ordering checks

TEST(RelayConfig, WatchdogTimeoutMustExceedInterval) {
  std::string msg = config_error({{"watchdog_interval_ms", "1000"}, {"watchdog_timeout_ms", "1000"}});
  EXPECT_TRUE(contains(msg, "watchdog_timeout_ms")) << msg;
  msg = config_error({{"watchdog_interval_ms", "2000"}, {"watchdog_timeout_ms", "1000"}});
  EXPECT_TRUE(contains(msg, "watchdog_timeout_ms")) << msg;
  // Only the interval raised past the default timeout.
  EXPECT_FALSE(config_error({{"watchdog_interval_ms", "5000"}}).empty());
  EXPECT_TRUE(config_error({{"watchdog_interval_ms", "1000"}, {"watchdog_timeout_ms", "1001"}}).empty());
}

TEST(RelayConfig, ReconnectMaxMustNotBeBelowInitial) {
  std::string msg = config_error({{"reconnect_initial_ms", "500"}, {"reconnect_max_ms", "499"}});
  EXPECT_TRUE(contains(msg, "reconnect_max_ms")) << msg;
  EXPECT_FALSE(config_error({{"reconnect_initial_ms", "6000"}}).empty());  // above the default max
  EXPECT_TRUE(config_error({{"reconnect_initial_ms", "500"}, {"reconnect_max_ms", "500"}}).empty());
}

TEST(RelayConfig, OutOfRangeIntegersAreConfigErrors) {
  EXPECT_TRUE(contains(config_error({{"sweep_batch", "0"}}), "flag --sweep-batch"));
  EXPECT_TRUE(contains(config_error({{"sweep_batch", "10001"}}), "flag --sweep-batch"));
  EXPECT_TRUE(contains(config_error({{"sweep_pipeline", "0"}}), "flag --sweep-pipeline"));
  EXPECT_TRUE(contains(config_error({{"sweep_pipeline", "17"}}), "flag --sweep-pipeline"));
  EXPECT_TRUE(contains(config_error({{"sweep_interval_ms", "9"}}), "flag --sweep-interval-ms"));
  EXPECT_TRUE(contains(config_error({}, {{"EXPIRY_RELAY_MAX_INFLIGHT_CLAIMS", "0"}}),
                       "env EXPIRY_RELAY_MAX_INFLIGHT_CLAIMS"));
}

TEST(RelayConfig, StreamRetentionOptionsFromFlagsAndEnv) {
  RelayConfig c = config({{"stream_retention_ms", "0"}, {"stream_trim_interval_ms", "250"}});
  EXPECT_EQ(c.stream_retention, milliseconds(0));
  EXPECT_EQ(c.stream_trim_interval, milliseconds(250));
  c = config({}, {{"EXPIRY_RELAY_STREAM_RETENTION_MS", "86400000"}, {"EXPIRY_RELAY_STREAM_TRIM_INTERVAL_MS", "0"}});
  EXPECT_EQ(c.stream_retention, milliseconds(86400000));
  EXPECT_EQ(c.stream_trim_interval, milliseconds(0));  // never trim
}

TEST(RelayConfig, BadStreamRetentionOptionsAreConfigErrors) {
  EXPECT_TRUE(contains(config_error({{"stream_retention_ms", "-1"}}), "flag --stream-retention-ms"));
  EXPECT_TRUE(contains(config_error({{"stream_retention_ms", "1h"}}), "must be an integer"));
  EXPECT_TRUE(contains(config_error({{"stream_retention_ms", "31536000001"}}), "flag --stream-retention-ms"));
  EXPECT_TRUE(contains(config_error({{"stream_trim_interval_ms", "-5"}}), "flag --stream-trim-interval-ms"));
  EXPECT_TRUE(contains(config_error({{"stream_trim_interval_ms", "86400001"}}), "flag --stream-trim-interval-ms"));
  const std::string msg = config_error({}, {{"EXPIRY_RELAY_STREAM_TRIM_INTERVAL_MS", "99"}});
  EXPECT_TRUE(contains(msg, "env EXPIRY_RELAY_STREAM_TRIM_INTERVAL_MS")) << msg;
  EXPECT_TRUE(contains(msg, "at least 100")) << msg;
  EXPECT_TRUE(config_error({{"stream_trim_interval_ms", "100"}}).empty());
}

TEST(RelayConfig, MaxLateFromFlagEnvAndConfigFile) {
  EXPECT_EQ(config({{"max_late_ms", "60000"}}).max_late_ms, 60000);
  EXPECT_EQ(config({}, {{"EXPIRY_RELAY_MAX_LATE_MS", "253402300799999"}}).max_late_ms, 253402300799999LL);
  const nlohmann::json file = {{"max_late_ms", 1500}};
  EnvLookup none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  const RelayConfig c =
      relay_config_from(Settings::resolve(relay_option_specs(), &file, "relay.json", none, "EXPIRY_RELAY", {}));
  EXPECT_EQ(c.max_late_ms, 1500);
  const nlohmann::json bad = {{"max_late_ms", -3}};
  try {
    relay_config_from(Settings::resolve(relay_option_specs(), &bad, "relay.json", none, "EXPIRY_RELAY", {}));
    ADD_FAILURE() << "a negative max_late_ms in the file was accepted";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(contains(e.what(), "relay.json")) << e.what();
  }
}

TEST(RelayConfig, BadMaxLateIsAConfigErrorNamingItsSource) {
  EXPECT_TRUE(contains(config_error({{"max_late_ms", "-1"}}), "flag --max-late-ms"));
  EXPECT_TRUE(contains(config_error({{"max_late_ms", "253402300800000"}}), "flag --max-late-ms"));
  EXPECT_TRUE(contains(config_error({{"max_late_ms", "5s"}}), "must be an integer"));
  EXPECT_TRUE(contains(config_error({}, {{"EXPIRY_RELAY_MAX_LATE_MS", "x"}}), "env EXPIRY_RELAY_MAX_LATE_MS"));
  EXPECT_TRUE(config_error({{"max_late_ms", "0"}}).empty());
}

TEST(RelayConfig, DeadStreamFollowsTheStreamLikeTheConsumers) {
  EXPECT_EQ(config({{"stream", "orders:timeouts"}}).dead_stream, "orders:timeouts:dead");
  EXPECT_EQ(config({{"namespace", "shop"}}).dead_stream, "shop:stream:dead");
  EXPECT_EQ(config({{"dead_stream", "late:orders"}}).dead_stream, "late:orders");
  EXPECT_EQ(config({}, {{"EXPIRY_RELAY_DEAD_STREAM", "late:x"}}).dead_stream, "late:x");
}

TEST(RelayConfig, BadDeadStreamIsAConfigErrorNamingItsSource) {
  std::string msg = config_error({{"dead_stream", "expiry:{0}:t:x"}});
  EXPECT_TRUE(contains(msg, "flag --dead-stream")) << msg;
  msg = config_error({}, {{"EXPIRY_RELAY_DEAD_STREAM", "expiry:stream"}});
  EXPECT_TRUE(contains(msg, "env EXPIRY_RELAY_DEAD_STREAM")) << msg;
  EXPECT_TRUE(contains(msg, "must differ")) << msg;
}

TEST(RelayConfig, TrimStreamsListsPerTaskStreamsOnce) {
  EXPECT_TRUE(config({}).trim_streams.empty());
  RelayConfig c = config({{"trim_streams", "orders:timeouts,billing:due,orders:timeouts"}});
  EXPECT_EQ(c.trim_streams, (std::vector<std::string>{"orders:timeouts", "billing:due"}));
  c = config({}, {{"EXPIRY_RELAY_TRIM_STREAMS", "expiry:stream,a"}});
  EXPECT_EQ(c.trim_streams, (std::vector<std::string>{"a"})) << "the relay's own stream is trimmed anyway";
}

TEST(RelayConfig, BadTrimStreamsAreConfigErrors) {
  std::string msg = config_error({{"trim_streams", "a,,b"}});
  EXPECT_TRUE(contains(msg, "flag --trim-streams")) << msg;
  EXPECT_TRUE(contains(msg, "empty stream name")) << msg;
  msg = config_error({{"trim_streams", "expiry:{0}:t:x"}});
  EXPECT_TRUE(contains(msg, "flag --trim-streams")) << msg;
  EXPECT_TRUE(contains(config_error({{"trim_streams", "a,"}}), "empty stream name"));
}

// ---------------------------------------------------------------- logging and instance

TEST(RelayConfig, LogLevels) {
  for (const char* level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    EXPECT_EQ(config({{"log_level", level}}).log_level, level);
  }
  for (const char* level : {"verbose", "INFO", "warning", "", "info "}) {
    const std::string msg = config_error({{"log_level", level}});
    EXPECT_TRUE(contains(msg, "log level")) << "'" << level << "': " << msg;
    EXPECT_TRUE(contains(msg, "flag --log-level")) << "'" << level << "': " << msg;
  }
}

TEST(RelayConfig, LogFormats) {
  EXPECT_EQ(config({{"log_format", "text"}}).log_format, "text");
  EXPECT_EQ(config({{"log_format", "json"}}).log_format, "json");
  for (const char* format : {"xml", "JSON", "", "logfmt"}) {
    const std::string msg = config_error({{"log_format", format}});
    EXPECT_TRUE(contains(msg, "log_format")) << "'" << format << "': " << msg;
  }
  EXPECT_TRUE(contains(config_error({}, {{"EXPIRY_RELAY_LOG_FORMAT", "xml"}}), "env EXPIRY_RELAY_LOG_FORMAT"));
}

TEST(RelayConfig, InstanceNameMustNotContainSpacesOrControls) {
  for (const char* name : {"a b", "a\tb", "a\nb", "x\x7f"}) {
    const std::string msg = config_error({{"instance", name}});
    EXPECT_TRUE(contains(msg, "instance")) << msg;
  }
}

// ---------------------------------------------------------------- Redis URL

TEST(RelayConfig, BadRedisUrlNamesTheSourceButNotThePassword) {
  std::string msg = config_error({{"redis_url", "redis://u:hunter2@h:0"}});
  EXPECT_TRUE(contains(msg, "flag --redis-url")) << msg;
  EXPECT_FALSE(contains(msg, "hunter2")) << msg;
  msg = config_error({}, {{"EXPIRY_RELAY_REDIS_URL", "http://u:hunter2@h"}});
  EXPECT_TRUE(contains(msg, "env EXPIRY_RELAY_REDIS_URL")) << msg;
  EXPECT_FALSE(contains(msg, "hunter2")) << msg;
}

// ---------------------------------------------------------------- password file

TEST(RelayConfig, PasswordFileReplacesTheUrlPassword) {
  TempFile f("from-file\n");
  const RelayConfig c = config({{"redis_url", "redis://alice:from-url@h:6390/2"}, {"password_file", f.path()}});
  EXPECT_EQ(c.redis.password, "from-file");
  EXPECT_EQ(c.redis.user, "alice");
  EXPECT_EQ(c.redis.host, "h");
  EXPECT_EQ(c.redis.port, 6390);
  EXPECT_EQ(c.redis.db, 2);
}

TEST(RelayConfig, PasswordFileAddsAPasswordToAUrlWithoutOne) {
  TempFile f("pw");
  const RelayConfig c = config({{"password_file", f.path()}});
  EXPECT_EQ(c.redis.password, "pw");
  EXPECT_EQ(c.redis.user, "");
}

TEST(RelayConfig, EmptyPasswordFileIsAnError) {
  TempFile empty("");
  std::string msg = config_error({{"password_file", empty.path()}});
  EXPECT_TRUE(contains(msg, empty.path())) << msg;
  EXPECT_TRUE(contains(msg, "empty")) << msg;

  TempFile blank_line("\nsecond-line\n");
  msg = config_error({{"password_file", blank_line.path()}});
  EXPECT_TRUE(contains(msg, "empty")) << msg;
  EXPECT_FALSE(contains(msg, "second-line")) << msg;
}

TEST(RelayConfig, MissingPasswordFileIsAnError) {
  const std::string missing = "/tmp/expiry_relay_config_test_does_not_exist_" + std::to_string(getpid());
  const std::string msg = config_error({{"password_file", missing}});
  EXPECT_TRUE(contains(msg, missing)) << msg;
  EXPECT_THROW(read_password_file(missing), ConfigError);
}

TEST(RelayConfig, UnreadablePasswordFileIsAConfigErrorNamingIt) {
  char dir_tmpl[] = "/tmp/expiry_relay_config_test_dir_XXXXXX";
  ASSERT_NE(mkdtemp(dir_tmpl), nullptr);
  const std::string dir = dir_tmpl;
  std::string msg = config_error({{"password_file", dir}});
  EXPECT_EQ(msg, "password file " + dir + " is a directory");
  rmdir(dir.c_str());
  msg = config_error({{"password_file", "/proc/self/mem"}});
  EXPECT_EQ(msg, "cannot read password file /proc/self/mem: Input/output error");
  TempFile f("pw\n");
  msg = config_error({{"password_file", f.path() + "/x"}});
  EXPECT_EQ(msg, "cannot read password file " + f.path() + "/x: Not a directory");
}

TEST(RelayConfig, ReadPasswordFileTakesTheFirstLine) {
  TempFile lf("s3cret\nignored\n");
  EXPECT_EQ(read_password_file(lf.path()), "s3cret");
  TempFile crlf("s3cret\r\nignored\r\n");
  EXPECT_EQ(read_password_file(crlf.path()), "s3cret");
  TempFile no_newline("s3cret");
  EXPECT_EQ(read_password_file(no_newline.path()), "s3cret");
  TempFile spaces(" with spaces \n");
  EXPECT_EQ(read_password_file(spaces.path()), " with spaces ");
  TempFile only_cr("\r\n");
  EXPECT_THROW(read_password_file(only_cr.path()), ConfigError);
  TempFile empty("");
  EXPECT_THROW(read_password_file(empty.path()), ConfigError);
}

TEST(RelayConfig, ApplyConnectionSettings) {
  TempFile f("pw-from-file\n");
  RedisEndpoint ep;
  std::string ns;
  apply_connection_settings(settings({{"redis_url", "redis://h:7000/3"}, {"namespace", "n1"},
                                      {"password_file", f.path()}}),
                            ep, ns);
  EXPECT_EQ(ep.host, "h");
  EXPECT_EQ(ep.port, 7000);
  EXPECT_EQ(ep.db, 3);
  EXPECT_EQ(ep.password, "pw-from-file");
  EXPECT_EQ(ns, "n1");
}

}  // namespace
}  // namespace expiry
