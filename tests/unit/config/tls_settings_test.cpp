// tls_settings_error and the tls_* options of the shared connection settings, without sockets.
#include "config/tls_settings.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/errors.h"
#include "config/service_options.h"

namespace expiry {
namespace {

Settings resolve(const std::map<std::string, std::string>& flags) {
  return Settings::resolve(connection_option_specs(), nullptr, "", [](const std::string&) { return std::nullopt; },
                           "TEST", flags);
}

std::string connection_error(const std::map<std::string, std::string>& flags) {
  RedisEndpoint redis;
  std::string ns;
  try {
    apply_connection_settings(resolve(flags), redis, ns);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(TlsSettings, PlainTextWithoutTlsOptionsIsFine) {
  EXPECT_FALSE(tls_settings_error(TlsSettings{}));
}

TEST(TlsSettings, EveryTlsOptionNeedsRediss) {
  TlsSettings t;
  t.server_name = "redis.example";
  auto err = tls_settings_error(t);
  ASSERT_TRUE(err);
  EXPECT_NE(err->find("tls_server_name"), std::string::npos) << *err;
  EXPECT_NE(err->find("rediss://"), std::string::npos) << *err;
  t = TlsSettings{};
  t.insecure = true;
  ASSERT_TRUE(tls_settings_error(t));
  EXPECT_NE(tls_settings_error(t)->find("tls_insecure"), std::string::npos);
  t.enabled = true;
  EXPECT_FALSE(tls_settings_error(t));
}

TEST(TlsSettings, ClientCertificateAndKeyGoTogether) {
  TlsSettings t;
  t.enabled = true;
  t.cert_file = "client.pem";
  ASSERT_TRUE(tls_settings_error(t));
  t.key_file = "client.key";
  EXPECT_FALSE(tls_settings_error(t));
  t.cert_file.clear();
  ASSERT_TRUE(tls_settings_error(t));
}

TEST(TlsSettings, ServerNameDefaultsToTheHost) {
  TlsSettings t;
  EXPECT_EQ(t.name_for("10.0.0.1"), "10.0.0.1");
  t.server_name = "redis.example";
  EXPECT_EQ(t.name_for("10.0.0.1"), "redis.example");
}

TEST(TlsSettings, ConnectionSettingsReadTheTlsOptions) {
  const std::string ca = ::testing::TempDir() + "/tls-settings-ca.pem";
  std::ofstream(ca) << "-----BEGIN CERTIFICATE-----\n";
  RedisEndpoint redis;
  std::string ns;
  apply_connection_settings(resolve({{"redis_url", "rediss://h:6380"},
                                     {"tls_ca_cert_file", ca},
                                     {"tls_server_name", "redis.example"},
                                     {"tls_insecure", "true"}}),
                            redis, ns);
  EXPECT_TRUE(redis.tls.enabled);
  EXPECT_EQ(redis.tls.ca_cert_file, ca);
  EXPECT_EQ(redis.tls.server_name, "redis.example");
  EXPECT_TRUE(redis.tls.insecure);
}

TEST(TlsSettings, UnreadableFilesAndPlainUrlsAreConfigurationErrors) {
  const std::string missing = ::testing::TempDir() + "/no-such-ca.pem";
  std::string err = connection_error({{"redis_url", "rediss://h:6380"}, {"tls_ca_cert_file", missing}});
  EXPECT_NE(err.find("cannot read tls_ca_cert_file"), std::string::npos) << err;
  err = connection_error({{"redis_url", "rediss://h:6380"}, {"tls_ca_cert_dir", missing}});
  EXPECT_NE(err.find("cannot read directory"), std::string::npos) << err;
  err = connection_error({{"redis_url", "redis://h:6380"}, {"tls_ca_cert_file", missing}});
  EXPECT_NE(err.find("not rediss://"), std::string::npos) << err;
  err = connection_error({{"redis_url", "rediss://h:6380"}, {"tls_key_file", missing}});
  EXPECT_NE(err.find("tls_cert_file and tls_key_file"), std::string::npos) << err;
}

}  // namespace
}  // namespace expiry
