// The TLS test fixtures themselves, checked with openssl and redis-cli only (no product code):
// the certificates TlsCerts makes have the properties the TLS tests rely on, and RedisServer's
// TLS mode serves TLS only, restarts on its port, asks for client certificates and swaps its
// certificate between restarts.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/child_process.h"
#include "integration/tls/redis_cli.h"
#include "integration/tls/suite_certs.h"
#include "support/redis_server.h"
#include "support/tls_certs.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

struct VerifyRun {
  int exit_code = -1;
  std::string output;
};

// `openssl verify -CAfile ca <extra...> cert`.
VerifyRun openssl_verify(const std::string& ca, const std::string& cert, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"verify", "-CAfile", ca};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(cert);
  ChildProcess child("/usr/bin/openssl", args);
  VerifyRun run;
  auto rc = child.wait_exit(30s);
  if (!rc) child.kill_hard();
  run.exit_code = rc.value_or(-1);
  run.output = child.output();
  return run;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

RedisServer::Options tls_options(const TlsCerts& certs, const CertFiles& server, bool auth_clients = false) {
  RedisServer::Options options;
  RedisTlsOptions tls;
  tls.cert_file = server.cert;
  tls.key_file = server.key;
  tls.ca_cert_file = certs.ca_file();
  tls.auth_clients = auth_clients;
  tls.probe_cert_file = certs.client().cert;
  tls.probe_key_file = certs.client().key;
  options.tls = tls;
  return options;
}

class TlsFixtureTest : public SuiteCerts<::testing::Test> {};

TEST_F(TlsFixtureTest, CertificatesHaveThePropertiesTheTestsRelyOn) {
  const TlsCerts& c = certs();
  auto ok = openssl_verify(c.ca_file(), c.server().cert, {"-purpose", "sslserver", "-verify_ip", "127.0.0.1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  ok = openssl_verify(c.ca_file(), c.server().cert, {"-purpose", "sslserver", "-verify_hostname", "localhost"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  ok = openssl_verify(c.ca_file(), c.client().cert, {"-purpose", "sslclient"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  ok = openssl_verify(c.ca_file(), c.other_name_server().cert, {"-verify_hostname", "other.example"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  ok = openssl_verify(c.wrong_ca_file(), c.wrong_ca_server().cert, {"-verify_ip", "127.0.0.1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;

  auto bad = openssl_verify(c.wrong_ca_file(), c.server().cert);
  EXPECT_NE(bad.exit_code, 0) << bad.output;
  bad = openssl_verify(c.ca_file(), c.wrong_ca_server().cert);
  EXPECT_NE(bad.exit_code, 0) << bad.output;
  bad = openssl_verify(c.ca_file(), c.expired_server().cert, {"-verify_ip", "127.0.0.1"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.output, "certificate has expired")) << bad.output;
  bad = openssl_verify(c.ca_file(), c.other_name_server().cert, {"-verify_ip", "127.0.0.1"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(contains(bad.output, "mismatch")) << bad.output;
}

TEST_F(TlsFixtureTest, CertificatesLiveInATempDirTheObjectRemoves) {
  std::string dir;
  {
    TlsCerts certs;
    dir = certs.dir();
    EXPECT_TRUE(std::filesystem::exists(certs.server().key));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST_F(TlsFixtureTest, ServesTlsOnlyOnItsPort) {
  RedisServer server(tls_options(certs(), certs().server()));
  EXPECT_TRUE(server.tls());
  EXPECT_EQ(server.url(3), "rediss://127.0.0.1:" + std::to_string(server.port()) + "/3");

  const CliRun tls = redis_cli_tls(server.port(), certs().ca_file(), {"PING"});
  EXPECT_EQ(tls.exit_code, 0) << tls.output;
  EXPECT_EQ(tls.output, "PONG\n");

  const CliRun plain = redis_cli({"-h", "127.0.0.1", "-p", std::to_string(server.port()), "PING"});
  EXPECT_FALSE(contains(plain.output, "PONG")) << plain.output;
}

TEST_F(TlsFixtureTest, StopStartAndKillHardKeepThePort) {
  RedisServer server(tls_options(certs(), certs().server()));
  const int port = server.port();
  const pid_t first = server.pid();
  server.stop();
  EXPECT_FALSE(server.running());
  EXPECT_NE(redis_cli_tls(port, certs().ca_file(), {"PING"}).output, "PONG\n");

  server.start();
  EXPECT_EQ(server.port(), port);
  EXPECT_NE(server.pid(), first);
  EXPECT_EQ(redis_cli_tls(port, certs().ca_file(), {"PING"}).output, "PONG\n");

  server.kill_hard();
  EXPECT_FALSE(server.running());
  server.start();
  EXPECT_EQ(redis_cli_tls(port, certs().ca_file(), {"PING"}).output, "PONG\n");
  EXPECT_THROW(server.start(), std::logic_error);
}

TEST_F(TlsFixtureTest, AuthClientsAsksForTheClientCertificate) {
  RedisServer server(tls_options(certs(), certs().server(), /*auth_clients=*/true));
  const CliRun without = redis_cli_tls(server.port(), certs().ca_file(), {"PING"});
  EXPECT_FALSE(contains(without.output, "PONG")) << without.output;
  const CliRun with =
      redis_cli_tls(server.port(), certs().ca_file(), {"PING"}, certs().client().cert, certs().client().key);
  EXPECT_EQ(with.output, "PONG\n");
}

TEST_F(TlsFixtureTest, ReplaceTlsServesAnotherCertificateAfterTheNextStart) {
  RedisServer server(tls_options(certs(), certs().server()));
  EXPECT_THROW(server.replace_tls(*tls_options(certs(), certs().wrong_ca_server()).tls), std::logic_error);
  server.stop();
  server.replace_tls(*tls_options(certs(), certs().wrong_ca_server()).tls);
  server.start();  // ready although clients trusting the CA refuse the certificate

  const CliRun refused = redis_cli_tls(server.port(), certs().ca_file(), {"PING"});
  EXPECT_TRUE(contains(refused.output, "certificate verify failed")) << refused.output;
  EXPECT_EQ(redis_cli_tls(server.port(), certs().wrong_ca_file(), {"PING"}).output, "PONG\n");

  server.stop();
  server.replace_tls(*tls_options(certs(), certs().server()).tls);
  server.start();
  EXPECT_EQ(redis_cli_tls(server.port(), certs().ca_file(), {"PING"}).output, "PONG\n");
}

TEST_F(TlsFixtureTest, IncompleteTlsOptionsAreRefusedBeforeAnythingStarts) {
  auto no_probe = tls_options(certs(), certs().server(), /*auth_clients=*/true);
  no_probe.tls->probe_key_file.clear();
  EXPECT_THROW(RedisServer{no_probe}, std::invalid_argument);
  auto no_key = tls_options(certs(), certs().server());
  no_key.tls->key_file.clear();
  EXPECT_THROW(RedisServer{no_key}, std::invalid_argument);
}

TEST_F(TlsFixtureTest, ReplaceTlsNeedsTlsMode) {
  RedisServer plain;
  EXPECT_EQ(plain.url(), "redis://127.0.0.1:" + std::to_string(plain.port()) + "/0");
  plain.stop();
  EXPECT_THROW(plain.replace_tls(*tls_options(certs(), certs().server()).tls), std::logic_error);
}

}  // namespace
}  // namespace expiry::test
