// expiry-relay, order-canceller and expiry-ctl over TLS (rediss://) against a TLS-only
// redis-server, without and with client certificates (tls-auth-clients no / yes): expiry-ctl
// schedules order timeouts, the relay forwards each exactly once, the canceller cancels and
// acknowledges them.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/tls/tls_harness.h"
#include "orders/orders_library.h"

namespace expiry::test {
namespace {

const std::string kStream = kOrderTimeoutStream;

class TlsProgramsTest : public SuiteCerts<::testing::TestWithParam<ClientCert>> {
 protected:

  // Client certificates are required exactly when the programs have one to present.
  static bool mutual() { return GetParam() == ClientCert::Present; }
  static std::vector<std::string> flags() { return tls_flags(certs(), GetParam()); }

  // Runs expiry-ctl with `args`, the server's rediss:// URL and the TLS flags.
  static ProgramRun ctl(const RedisServer& server, std::vector<std::string> args) {
    args.insert(args.end(), {"--redis-url", server.url()});
    const auto tls = flags();
    args.insert(args.end(), tls.begin(), tls.end());
    return run_to_exit(EXPIRY_CTL_BIN, args);
  }

};

// The log lines at level warning, error or critical (none when TLS works as configured).
std::string problem_lines(const std::string& log) {
  static const std::regex kProblem("^\\S+ (warning|error|critical) ");
  std::istringstream lines(log);
  std::string line;
  std::string out;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, kProblem)) out += line + "\n";
  }
  return out;
}

std::string order_payload(const std::string& order_id) { return nlohmann::json{{"order_id", order_id}}.dump(); }

TEST_P(TlsProgramsTest, CtlSchedulesTheRelayForwardsAndTheCancellerCancels) {
  RedisServer server(tls_server_options(certs(), certs().server(), mutual()));
  auto redis = connect_tls(server, certs());
  auto relay = start_relay(server, "r1", flags());
  wait_relay_ready(*redis, "r1", *relay);
  auto canceller = start_canceller(server, "c1", flags());

  // 10 timeouts scheduled one command at a time, 30 from one bulk file.
  const int kSingle = 10;
  const int kBulk = 30;
  std::map<std::string, std::string> expected;  // task id -> payload
  std::ofstream bulk(server.dir() + "/bulk.jsonl");
  for (int i = 0; i < kSingle + kBulk; ++i) {
    const std::string order = "t" + std::to_string(i);
    const std::string id = "order:" + order;
    expected[id] = order_payload(order);
    redis->checked({"HSET", "order:" + order, "status", "pending"});
    if (i < kSingle) continue;
    bulk << nlohmann::json{{"id", id}, {"delay_ms", 300}, {"payload", expected[id]}, {"stream", kStream}}.dump()
         << "\n";
  }
  bulk.close();
  ASSERT_TRUE(bulk.good());
  for (int i = 0; i < kSingle; ++i) {
    const std::string id = "order:t" + std::to_string(i);
    const ProgramRun run = ctl(server, {"schedule", id, "--delay-ms", "300", "--payload", expected[id], "--stream", kStream});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(std::regex_search(run.output, std::regex("^scheduled " + id + " due_ms=\\d+\n$"))) << run.output;
  }
  const ProgramRun file = ctl(server, {"schedule", "--file", server.dir() + "/bulk.jsonl"});
  ASSERT_EQ(file.exit_code, 0) << file.output;

  auto all_cancelled = [&] {
    for (const auto& [id, payload] : expected) {
      if (redis->command({"HGET", id, "status"}).str != "cancelled") return false;
    }
    return true;
  };
  auto pending = [&] { return redis->command({"XPENDING", kStream, "workers"}).elements.at(0).integer; };
  ASSERT_TRUE(wait_until([&] { return all_cancelled() && pending() == 0; }, 30s))
      << "relay:\n" << relay->output() << "\ncanceller:\n" << canceller->output();
  EXPECT_EQ(zcard(*redis), 0);
  expect_exactly_once(xrange_all(*redis, kStream), expected);

  EXPECT_EQ(canceller->terminate(), 0) << canceller->output();
  EXPECT_TRUE(contains(canceller->output(), "cancelled=40 ")) << canceller->output();
  EXPECT_EQ(relay->terminate(), 0) << relay->output();
  for (const auto* program : {relay.get(), canceller.get()}) {
    EXPECT_EQ(problem_lines(program->output()), "") << program->output();
  }
}

TEST_P(TlsProgramsTest, CtlShowsCancelsAndReports) {
  RedisServer server(tls_server_options(certs(), certs().server(), mutual()));
  ASSERT_EQ(ctl(server, {"schedule", "later", "--delay-ms", "600000", "--payload", "p"}).exit_code, 0);
  const ProgramRun show = ctl(server, {"show", "later", "--json"});
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_EQ(nlohmann::json::parse(show.output).at("payload"), "p") << show.output;
  const ProgramRun stats = ctl(server, {"stats", "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_TRUE(nlohmann::json::accept(stats.output)) << stats.output;
  const ProgramRun cancel = ctl(server, {"cancel", "later", "--strict"});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.output;
  EXPECT_EQ(ctl(server, {"show", "later"}).exit_code, 3);
}

TEST_P(TlsProgramsTest, ServerNameSelectsTheNameThatIsVerified) {
  // The certificate names other.example only: connecting to 127.0.0.1 verifies it against that name.
  RedisServer server(tls_server_options(certs(), certs().other_name_server(), mutual()));
  std::vector<std::string> args = {"schedule", "sni", "--delay-ms", "600000", "--tls-server-name", "other.example"};
  const ProgramRun run = ctl(server, args);
  EXPECT_EQ(run.exit_code, 0) << run.output;

  auto redis = connect_tls(server, certs(), /*insecure=*/true);
  auto extra = flags();
  extra.insert(extra.end(), {"--tls-server-name", "other.example"});
  auto relay = start_relay(server, "r1", extra);
  wait_relay_ready(*redis, "r1", *relay);
  EXPECT_TRUE(relay->running());
}

INSTANTIATE_TEST_SUITE_P(ClientCertificates, TlsProgramsTest,
                         ::testing::Values(ClientCert::None, ClientCert::Present),
                         [](const ::testing::TestParamInfo<ClientCert>& info) {
                           return info.param == ClientCert::Present ? std::string("Mutual") : std::string("ServerOnly");
                         });

}  // namespace
}  // namespace expiry::test
