// The sentinel list parser, sentinel_settings_error and the sentinel options of the shared
// connection settings, without sockets.
#include "config/sentinel_settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "base/errors.h"
#include "config/service_options.h"

namespace expiry {
namespace {

Settings resolve(const std::map<std::string, std::string>& flags) {
  return Settings::resolve(connection_option_specs(), nullptr, "", [](const std::string&) { return std::nullopt; },
                           "TEST", flags);
}

// The endpoint the flags give, or the ConfigError's text in `error`.
RedisEndpoint endpoint_of(const std::map<std::string, std::string>& flags, std::string* error) {
  RedisEndpoint redis;
  std::string ns;
  try {
    apply_connection_settings(resolve(flags), redis, ns);
  } catch (const ConfigError& e) {
    *error = e.what();
  }
  return redis;
}

std::string parse_error(const std::string& text) {
  try {
    parse_sentinel_list(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(SentinelSettings, ParsesAListOfAddresses) {
  const auto list = parse_sentinel_list("127.0.0.1:26379,sentinel-2:26380,[::1]:26381");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0], (NodeAddress{"127.0.0.1", 26379}));
  EXPECT_EQ(list[1], (NodeAddress{"sentinel-2", 26380}));
  EXPECT_EQ(list[2], (NodeAddress{"::1", 26381}));
}

TEST(SentinelSettings, RefusesWhatIsNotAnAddressList) {
  EXPECT_NE(parse_error("").find("empty item"), std::string::npos);
  EXPECT_NE(parse_error("127.0.0.1:26379,").find("empty item"), std::string::npos);
  EXPECT_NE(parse_error("127.0.0.1").find("\"127.0.0.1\" is not a sentinel address"), std::string::npos);
  EXPECT_NE(parse_error("127.0.0.1:0").find("not a sentinel address"), std::string::npos);
  EXPECT_NE(parse_error("127.0.0.1:70000").find("not a sentinel address"), std::string::npos);
  EXPECT_NE(parse_error("h:26379@1").find("not a sentinel address"), std::string::npos);
  EXPECT_NE(parse_error("a:1,a:1").find("listed twice"), std::string::npos);
}

TEST(SentinelSettings, SentinelsAndMasterNameGoTogether) {
  SentinelSettings s;
  EXPECT_FALSE(sentinel_settings_error(s));
  s.master = "mymaster";
  EXPECT_NE(sentinel_settings_error(s)->find("no sentinel"), std::string::npos);
  s.master.clear();
  s.sentinels = {{"127.0.0.1", 26379}};
  EXPECT_NE(sentinel_settings_error(s)->find("--sentinel-master"), std::string::npos);
  s.master = "my master";
  EXPECT_NE(sentinel_settings_error(s)->find("spaces"), std::string::npos);
  s.master = "mymaster";
  EXPECT_FALSE(sentinel_settings_error(s));
  EXPECT_EQ(s.describe(), "mymaster via 127.0.0.1:26379");
}

TEST(SentinelSettings, OptionsFillTheEndpoint) {
  std::string error;
  const RedisEndpoint e = endpoint_of({{"redis_url", "redis://app:secret@ignored:1/3"},
                                       {"sentinel", "127.0.0.1:26379,127.0.0.1:26380"},
                                       {"sentinel_master", "orders"}},
                                      &error);
  ASSERT_EQ(error, "");
  EXPECT_TRUE(e.sentinel.enabled());
  EXPECT_EQ(e.sentinel.sentinels.size(), 2u);
  EXPECT_EQ(e.sentinel.master, "orders");
  EXPECT_EQ(e.sentinel.password, "");
  EXPECT_EQ(e.user, "app");  // the URL still gives the data credentials and db
  EXPECT_EQ(e.password, "secret");
  EXPECT_EQ(e.db, 3);
}

TEST(SentinelSettings, WithoutSentinelNothingChanges) {
  std::string error;
  const RedisEndpoint e = endpoint_of({{"redis_url", "redis://127.0.0.1:7000/0"}}, &error);
  ASSERT_EQ(error, "");
  EXPECT_FALSE(e.sentinel.enabled());
  EXPECT_EQ(e.port, 7000);
}

TEST(SentinelSettings, BadOptionsNameTheirSource) {
  std::string error;
  endpoint_of({{"sentinel", "127.0.0.1"}, {"sentinel_master", "m"}}, &error);
  EXPECT_NE(error.find("flag --sentinel"), std::string::npos) << error;
  error.clear();
  endpoint_of({{"sentinel", "127.0.0.1:26379"}}, &error);
  EXPECT_EQ(error.rfind("flag --sentinel: ", 0), 0u) << error;
  EXPECT_NE(error.find("--sentinel-master"), std::string::npos) << error;
  error.clear();
  endpoint_of({{"sentinel_master", "m"}}, &error);
  EXPECT_NE(error.find("no sentinel"), std::string::npos) << error;
  error.clear();
  endpoint_of({{"sentinel", "127.0.0.1:26379"}, {"sentinel_master", "m"}, {"sentinel_password_file", "/nonexistent/x"}},
              &error);
  EXPECT_NE(error.find("/nonexistent/x"), std::string::npos) << error;
}

TEST(SentinelSettings, ThePasswordFileGivesTheSentinelPassword) {
  char path[] = "/tmp/sentinel-pass.XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "s3ntinel\n";
  std::string error;
  const RedisEndpoint e = endpoint_of(
      {{"sentinel", "127.0.0.1:26379"}, {"sentinel_master", "m"}, {"sentinel_password_file", path}}, &error);
  unlink(path);
  ASSERT_EQ(error, "");
  EXPECT_EQ(e.sentinel.password, "s3ntinel");
  EXPECT_EQ(e.password, "");  // the data password is another one
}

}  // namespace
}  // namespace expiry
