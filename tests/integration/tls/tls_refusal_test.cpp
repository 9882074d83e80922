// TLS setups that cannot work end each program at start with exit 2 and a message naming the
// cause: a missing client certificate, a wrong CA, an expired or misnamed server certificate,
// plain text against a TLS port (and TLS against a plain one), inconsistent tls_* settings; and
// connections a network drops unanswered, which look alike, are retried.
// --tls-insecure connects where verification would refuse, with a warning.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "chaos/tcp_proxy.h"
#include "integration/tls/tls_harness.h"
#include "orders/orders_library.h"

namespace expiry::test {
namespace {

enum class Program { Relay, Canceller, Ctl };

const char* program_name(Program p) {
  switch (p) {
    case Program::Relay:
      return "Relay";
    case Program::Canceller:
      return "Canceller";
    case Program::Ctl:
      return "Ctl";
  }
  return "?";
}

// Runs `program` against `url` with `flags` until it exits: the relay and the canceller as
// services, expiry-ctl scheduling one task.
ProgramRun run_program(Program program, const std::string& url, const std::vector<std::string>& flags) {
  std::vector<std::string> args;
  std::string binary;
  switch (program) {
    case Program::Relay:
      binary = EXPIRY_RELAY_BIN;
      args = {"--redis-url", url, "--instance", "r1", "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200"};
      break;
    case Program::Canceller:
      binary = ORDER_CANCELLER_BIN;
      args = {"--redis-url", url, "--consumer", "c1", "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200"};
      break;
    case Program::Ctl:
      binary = EXPIRY_CTL_BIN;
      args = {"schedule", "t1", "--delay-ms", "600000", "--redis-url", url};
      break;
  }
  args.insert(args.end(), flags.begin(), flags.end());
  return run_to_exit(binary, args);
}

class TlsRefusalTest : public SuiteCerts<::testing::TestWithParam<Program>> {
 protected:

  // Runs the program under test against `url` with `flags` and expects exit 2 with `phrase` in
  // its output.
  static void expect_refused(const std::string& url, const std::vector<std::string>& flags,
                             const std::string& phrase) {
    const ProgramRun run = run_program(GetParam(), url, flags);
    EXPECT_EQ(run.exit_code, 2) << run.output;
    EXPECT_TRUE(contains(run.output, phrase)) << "expected \"" << phrase << "\" in:\n" << run.output;
  }

};

TEST_P(TlsRefusalTest, AServerThatRequiresAClientCertificateRefusesNone) {
  RedisServer server(tls_server_options(certs(), certs().server(), /*auth_clients=*/true));
  expect_refused(server.url(), tls_flags(certs(), ClientCert::None), "client certificate");
}

TEST_P(TlsRefusalTest, AWrongCaDoesNotVerifyTheServer) {
  RedisServer server(tls_server_options(certs(), certs().server()));
  expect_refused(server.url(), {"--tls-ca-cert-file", certs().wrong_ca_file()}, "certificate verify failed");
}

TEST_P(TlsRefusalTest, AServerCertificateFromAnotherCaDoesNotVerify) {
  RedisServer server(tls_server_options(certs(), certs().wrong_ca_server()));
  expect_refused(server.url(), tls_flags(certs(), ClientCert::None), "certificate verify failed");
}

TEST_P(TlsRefusalTest, AnExpiredServerCertificateIsRefused) {
  RedisServer server(tls_server_options(certs(), certs().expired_server()));
  expect_refused(server.url(), tls_flags(certs(), ClientCert::None), "certificate has expired");
}

TEST_P(TlsRefusalTest, AServerNameTheCertificateDoesNotNameIsRefused) {
  RedisServer server(tls_server_options(certs(), certs().server()));
  auto flags = tls_flags(certs(), ClientCert::None);
  flags.insert(flags.end(), {"--tls-server-name", "other.example"});
  expect_refused(server.url(), flags, "mismatch");
}

TEST_P(TlsRefusalTest, ACertificateForAnotherNameIsRefused) {
  RedisServer server(tls_server_options(certs(), certs().other_name_server()));
  expect_refused(server.url(), tls_flags(certs(), ClientCert::None), "mismatch");
}

// The port closes plain text unanswered; a probe finds it answering a TLS ClientHello.
TEST_P(TlsRefusalTest, PlainTextAgainstATlsPortNamesRediss) {
  RedisServer server(tls_server_options(certs(), certs().server()));
  const std::string url = "redis://127.0.0.1:" + std::to_string(server.port()) + "/0";
  expect_refused(url, {}, "rediss://");
}

// A plain-text Redis never answers a TLS handshake (it waits for the end of an inline command),
// which alone looks like a hung server. Before the first connection a plain PING tells them
// apart: every program exits 2 naming plain text and redis://, as a plain client on a TLS port
// does (it used to retry forever).
TEST_P(TlsRefusalTest, TlsAgainstAPlainPortNamesPlainTextAndExits2) {
  RedisServer server;
  const std::string url = "rediss://127.0.0.1:" + std::to_string(server.port()) + "/0";
  auto flags = tls_flags(certs(), ClientCert::None);
  if (GetParam() != Program::Ctl) flags.insert(flags.end(), {"--connect-timeout-ms", "500"});
  expect_refused(url, flags, "answers in plain text, not TLS: use a redis:// URL");
}

TEST_P(TlsRefusalTest, TlsSettingsWithAPlainUrlAreAConfigurationError) {
  RedisServer server;
  const ProgramRun run = run_program(GetParam(), server.url(), tls_flags(certs(), ClientCert::None));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "rediss://")) << run.output;
}

TEST_P(TlsRefusalTest, ACertificateWithoutItsKeyIsAConfigurationError) {
  RedisServer server(tls_server_options(certs(), certs().server()));
  const ProgramRun run =
      run_program(GetParam(), server.url(), {"--tls-ca-cert-file", certs().ca_file(), "--tls-cert-file", certs().client().cert});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "tls")) << run.output;
}

INSTANTIATE_TEST_SUITE_P(Programs, TlsRefusalTest,
                         ::testing::Values(Program::Relay, Program::Canceller, Program::Ctl),
                         [](const ::testing::TestParamInfo<Program>& info) { return program_name(info.param); });

// A proxy that accepts connections and closes them at once (a partition, a balancer without a
// backend) closes every attempt before any answer, like the refusals above, but the probe finds
// no TLS refusal behind it: the services keep retrying, and connect once the proxy forwards.
class DroppedConnectionTest : public SuiteCerts<::testing::TestWithParam<bool>> {};

TEST_P(DroppedConnectionTest, TheServicesRetryUntilTheNetworkForwards) {
  const bool tls = GetParam();
  for (const Program program : {Program::Relay, Program::Canceller}) {
    SCOPED_TRACE(program_name(program));
    auto server = tls ? std::make_unique<RedisServer>(tls_server_options(certs(), certs().server()))
                      : std::make_unique<RedisServer>();
    TcpProxy proxy(server->port());
    proxy.cut(TcpProxy::CutMode::Refuse);
    std::vector<std::string> args = {"--redis-url",
                                     std::string(tls ? "rediss" : "redis") + "://127.0.0.1:" +
                                         std::to_string(proxy.port()) + "/0",
                                     "--reconnect-initial-ms", "20", "--reconnect-max-ms", "100",
                                     program == Program::Relay ? "--instance" : "--consumer", "p1"};
    if (tls) {
      for (const auto& f : tls_flags(certs(), ClientCert::None)) args.push_back(f);
    }
    ChildProcess child(program == Program::Relay ? EXPIRY_RELAY_BIN : ORDER_CANCELLER_BIN, args);
    // Well past the second attempt, which used to count as a refusal.
    ASSERT_TRUE(wait_until([&] { return count_lines_with(child.output(), "failed") >= 6 || !child.running(); }, 60s))
        << child.output();
    ASSERT_TRUE(child.running()) << child.output();
    proxy.restore();
    ASSERT_TRUE(wait_until(
        [&] { return count_lines_with(child.output(), "connection ready") >= 1 || !child.running(); }, 60s))
        << child.output();
    EXPECT_TRUE(child.running()) << child.output();
  }
}

INSTANTIATE_TEST_SUITE_P(Urls, DroppedConnectionTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Tls" : "Plain"; });

// --tls-insecure: no verification at all, so the server whose certificate comes from another CA
// is accepted; the program says so with a warning at start.
class TlsInsecureTest : public ::testing::Test {
 protected:
  TlsCerts certs_;
  RedisServer server_{tls_server_options(certs_, certs_.wrong_ca_server())};
  std::unique_ptr<SyncConnection> redis_ = connect_tls(server_, certs_, /*insecure=*/true);
  const std::vector<std::string> flags_ = {"--tls-insecure"};
};

bool warns_insecure(const std::string& output) {
  return contains(output, "warning") && contains(output, "insecure");
}

TEST_F(TlsInsecureTest, TheRelayConnectsAndWarns) {
  auto relay = start_relay(server_, "r1", flags_);
  wait_relay_ready(*redis_, "r1", *relay);
  EXPECT_TRUE(warns_insecure(relay->output())) << relay->output();
}

TEST_F(TlsInsecureTest, TheCancellerConnectsAndWarns) {
  auto canceller = start_canceller(server_, "c1", flags_);
  // Connected once it cancels an order whose timeout fired.
  redis_->checked({"HSET", "order:o1", "status", "pending"});
  redis_->checked({"XADD", kOrderTimeoutStream, "*", "id", "order:o1", "payload", "{\"order_id\":\"o1\"}", "due_ms",
                   "1", "fired_ms", "1", "via", "sweep"});
  ASSERT_TRUE(wait_until([&] { return redis_->command({"HGET", "order:o1", "status"}).str == "cancelled"; }, 10s))
      << canceller->output();
  EXPECT_TRUE(canceller->running());
  EXPECT_TRUE(warns_insecure(canceller->output())) << canceller->output();
}

TEST_F(TlsInsecureTest, ExpiryCtlConnectsAndWarns) {
  const ProgramRun run = run_program(Program::Ctl, server_.url(), flags_);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(warns_insecure(run.output)) << run.output;
  EXPECT_EQ(zcard(*redis_), 1);
}

}  // namespace
}  // namespace expiry::test
