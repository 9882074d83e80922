// expiry-api serving HTTPS itself (--tls-listen-cert-file, --tls-listen-key-file) with the
// certificates of TlsCerts: a PUT and a GET over HTTPS verified against the test CA, a client
// trusting another CA refused, a stalled handshake closed at the idle timeout, plain HTTP on the
// TLS port schedules nothing (and the port keeps serving HTTPS), and the configuration errors
// (one flag alone, a missing file, not PEM, a key that is not the certificate's): exit 2 with a
// message naming them.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "integration/api/api_harness.h"
#include "support/redis_client.h"
#include "support/tls_certs.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;

std::vector<std::string> tls_flags(const CertFiles& files) {
  return {"--tls-listen-cert-file", files.cert, "--tls-listen-key-file", files.key};
}

ApiCall put_call(const std::string& id, const std::string& payload) {
  ApiCall c;
  c.method = "PUT";
  c.path = "/v1/tasks/" + id;
  c.token = kWriteToken;
  c.body = json{{"delay_ms", 3600000}, {"payload", payload}}.dump();
  return c;
}

ApiCall get_call(const std::string& id) {
  ApiCall c;
  c.path = "/v1/tasks/" + id;
  c.token = kReadToken;
  return c;
}

class ApiTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    redis_ = std::make_unique<TestConnection>(server_.host(), server_.port());
    api_ = std::make_unique<ApiProcess>(ApiTarget{server_.url(), server_.dir(), certs_.ca_file()},
                                        tls_flags(certs_.server()));
  }
  bool scheduled(const std::string& id) {
    return redis_->command({"ZSCORE", KeyLayout("expiry").schedule_key(), id}).type == Reply::Type::String;
  }

  TlsCerts certs_;
  RedisServer server_;
  std::unique_ptr<TestConnection> redis_;
  std::unique_ptr<ApiProcess> api_;
};

TEST_F(ApiTlsTest, HttpsPutAndGetVerifiedAgainstTheTestCa) {
  const HttpAnswer put = api_->call(put_call("tls-1", "over https"));
  ASSERT_EQ(put.status, 201) << put.body << put.error << api_->child().output();
  EXPECT_TRUE(scheduled("tls-1"));
  const HttpAnswer got = api_->call(get_call("tls-1"));
  ASSERT_EQ(got.status, 200) << got.body << got.error;
  const json j = json::parse(got.body, nullptr, false);
  ASSERT_TRUE(j.is_object()) << got.body;
  EXPECT_EQ(j.value("id", ""), "tls-1");
  EXPECT_EQ(j.value("payload", ""), "over https");
  // The log says which it serves.
  EXPECT_NE(api_->child().output().find("HTTPS"), std::string::npos) << api_->child().output();
}

TEST_F(ApiTlsTest, AClientTrustingAnotherCaRefusesTheServer) {
  const HttpAnswer r = call_api(api_->port(), get_call("tls-1"), certs_.wrong_ca_file());
  EXPECT_EQ(r.status, 0) << r.body;
  EXPECT_FALSE(r.error.empty());
}

TEST_F(ApiTlsTest, PlainHttpOnTheTlsPortSchedulesNothing) {
  const HttpAnswer plain = call_api(api_->port(), put_call("cleartext", "must not be scheduled"));  // http://
  EXPECT_NE(plain.status, 201) << plain.body;
  EXPECT_NE(plain.status, 200) << plain.body;
  EXPECT_FALSE(scheduled("cleartext"));
  // The port still serves HTTPS, and the task is not there.
  const HttpAnswer got = api_->call(get_call("cleartext"));
  EXPECT_EQ(got.status, 404) << got.body << got.error;
  EXPECT_EQ(api_->call(put_call("after", "ok")).status, 201);
  EXPECT_FALSE(scheduled("cleartext"));
  EXPECT_TRUE(scheduled("after"));
}

// A client that connects and never starts the handshake is closed at the idle timeout.
TEST(ApiTlsIdleTest, AStalledHandshakeIsClosedAtTheIdleTimeout) {
  TlsCerts certs;
  RedisServer server;
  std::vector<std::string> flags = tls_flags(certs.server());
  flags.insert(flags.end(), {"--http-timeout-s", "1"});
  ApiProcess api(ApiTarget{server.url(), server.dir(), certs.ca_file()}, flags);
  const int fd = connect_loopback(api.port());
  ASSERT_GE(fd, 0);
  bool closed = false;
  read_until_closed(fd, std::chrono::seconds(20), &closed);
  ::close(fd);
  EXPECT_TRUE(closed) << "still open after 20 s";
  EXPECT_EQ(api.call(get_call("none")).status, 404);  // and HTTPS still served
}

// Runs expiry-api to its exit (it must not start) and returns exit code and output.
std::pair<int, std::string> run_to_exit(const RedisServer& server, const std::string& tokens,
                                        const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--listen", "127.0.0.1:0", "--tokens-file", tokens, "--redis-url", server.url()};
  args.insert(args.end(), extra.begin(), extra.end());
  ChildProcess api(EXPIRY_API_BIN, args);
  const auto rc = api.wait_exit(std::chrono::seconds(30));
  if (!rc) {
    api.kill_hard();
    ADD_FAILURE() << "expiry-api did not exit: " << api.output();
    return {-1, api.output()};
  }
  return {*rc, api.output()};
}

TEST(ApiTlsConfigTest, MismatchedOrBadTlsListenOptionsExit2) {
  TlsCerts certs;
  RedisServer server;
  ScratchDir dir("expiry_api_tls");
  const std::string tokens = dir.write("tokens", tokens_file_text());
  const std::string not_pem = dir.write("not.pem", "not a certificate\n");
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--tls-listen-cert-file", certs.server().cert}, "--tls-listen-cert-file and --tls-listen-key-file go together"},
      {{"--tls-listen-key-file", certs.server().key}, "--tls-listen-cert-file and --tls-listen-key-file go together"},
      {{"--tls-listen-cert-file", dir.path() + "/missing.crt", "--tls-listen-key-file", certs.server().key},
       "cannot read --tls-listen-cert-file"},
      {{"--tls-listen-cert-file", certs.server().cert, "--tls-listen-key-file", dir.path() + "/missing.key"},
       "cannot read --tls-listen-key-file"},
      {{"--tls-listen-cert-file", not_pem, "--tls-listen-key-file", certs.server().key},
       "not a usable PEM certificate"},
      {{"--tls-listen-cert-file", certs.server().cert, "--tls-listen-key-file", not_pem},
       "not a usable PEM private key"},
      {{"--tls-listen-cert-file", certs.server().cert, "--tls-listen-key-file", certs.client().key},
       "is not the private key of --tls-listen-cert-file"},
  };
  for (const Case& c : cases) {
    const auto [rc, output] = run_to_exit(server, tokens, c.flags);
    EXPECT_EQ(rc, 2) << output;
    EXPECT_NE(output.find(c.message), std::string::npos) << c.message << "\n" << output;
  }
}

}  // namespace
}  // namespace expiry::test
