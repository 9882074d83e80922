// A relay on TLS across Redis restarts: a restart loses and repeats nothing, and a restart with
// a certificate that no longer verifies is logged and retried with backoff (no exit, no log
// flood, no busy loop) until the good certificate is back.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "integration/tls/tls_harness.h"

namespace expiry::test {
namespace {

// Persistence, so that a restart keeps the schedule and the stream (the fixture has none).
const std::vector<std::string> kDurable = {"appendonly yes", "appendfsync always", "aof-use-rdb-preamble no"};

std::vector<Task> numbered(const std::string& prefix, int n, long long spread_ms) {
  std::vector<Task> tasks;
  for (int i = 0; i < n; ++i) {
    tasks.push_back({prefix + std::to_string(i), spread_ms * i / n, "payload-" + std::to_string(i)});
  }
  return tasks;
}

std::map<std::string, std::string> payloads(const std::vector<Task>& tasks) {
  std::map<std::string, std::string> out;
  for (const auto& t : tasks) out[t.id] = t.payload;
  return out;
}

class TlsRestartTest : public ::testing::Test {
 protected:
  TlsCerts certs_;
};

TEST_F(TlsRestartTest, ARestartUnderMutualTlsLosesAndRepeatsNothing) {
  RedisServer server(tls_server_options(certs_, certs_.server(), /*auth_clients=*/true, kDurable));
  auto redis = connect_tls(server, certs_);
  auto relay = start_relay(server, "r1", tls_flags(certs_, ClientCert::Present));
  wait_relay_ready(*redis, "r1", *relay);

  const auto tasks = numbered("restart-", 300, 4000);  // due over the next 4 s
  schedule_all(*redis, tasks);
  ASSERT_TRUE(wait_until([&] { return xlen(*redis) >= 20; }, 10s)) << relay->output();
  ASSERT_GT(zcard(*redis), 0) << "every task was forwarded before the restart";
  server.stop();
  server.start();

  auto again = connect_tls(server, certs_);
  ASSERT_TRUE(wait_until([&] { return zcard(*again) == 0 && xlen(*again) == 300; }, 30s))
      << "zcard " << zcard(*again) << " xlen " << xlen(*again) << "\n" << relay->output();
  expect_exactly_once(xrange_all(*again, "expiry:stream"), payloads(tasks));
  EXPECT_TRUE(relay->running());
  EXPECT_TRUE(contains(relay->output(), "connection lost")) << relay->output();
}

TEST_F(TlsRestartTest, ACertificateThatNoLongerVerifiesIsRetriedUntilTheGoodOneIsBack) {
  RedisServer server(tls_server_options(certs_, certs_.server(), /*auth_clients=*/false, kDurable));
  // The default jitter (0.5) keeps every retry at least half the capped delay apart: at most two
  // attempts per second per connection once backoff reaches 1 s.
  std::vector<std::string> args = {"--redis-url", server.url(), "--instance", "r1", "--reconnect-initial-ms", "100",
                                   "--reconnect-max-ms", "1000", "--watchdog-interval-ms", "200",
                                   "--watchdog-timeout-ms", "1000"};
  const auto tls = tls_flags(certs_, ClientCert::None);
  args.insert(args.end(), tls.begin(), tls.end());
  ChildProcess relay(EXPIRY_RELAY_BIN, args, {}, server.dir() + "/relay-r1.log");
  {
    auto redis = connect_tls(server, certs_);
    wait_relay_ready(*redis, "r1", relay);
  }

  server.stop();
  server.replace_tls(tls_server_options(certs_, certs_.expired_server()).tls.value());
  server.start();
  auto redis = connect_tls(server, certs_, /*insecure=*/true);
  const auto tasks = numbered("rotated-", 100, 1000);
  schedule_all(*redis, tasks);

  // Each refused attempt is logged (a line or two per connection). The rate is measured from the
  // 12th to the 30th line naming the cause, once backoff has (nearly) reached its 1 s cap.
  const std::string kCause = "certificate has expired";
  using Clock = std::chrono::steady_clock;
  auto causes = [&] { return count_lines_with(relay.output(), kCause); };
  ASSERT_TRUE(wait_until([&] { return causes() >= 12 || !relay.running(); }, 30s)) << relay.output();
  const auto t0 = Clock::now();
  const size_t lines0 = count_lines_with(relay.output());
  const double cpu0 = relay.usage().cpu_seconds;
  ASSERT_TRUE(wait_until([&] { return causes() >= 30 || !relay.running(); }, 60s)) << relay.output();
  ASSERT_TRUE(relay.running()) << "the relay exited on a TLS error after start:\n" << relay.output();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = relay.usage().cpu_seconds - cpu0;
  const size_t lines = count_lines_with(relay.output()) - lines0;
  RecordProperty("refused_window_s", std::to_string(seconds));
  RecordProperty("log_lines_per_s", std::to_string(static_cast<double>(lines) / seconds));
  RecordProperty("cpu_fraction", std::to_string(cpu / seconds));
  EXPECT_LE(static_cast<double>(lines) / seconds, 10.0)
      << lines << " log lines in " << seconds << " s:\n" << tail_lines(relay.output(), 40);
  EXPECT_LE(cpu / seconds, 0.2) << cpu << " s of CPU in " << seconds << " s";
  EXPECT_EQ(zcard(*redis), 100) << "nothing can be forwarded while the relay refuses the server";

  server.stop();
  server.replace_tls(tls_server_options(certs_, certs_.server()).tls.value());
  server.start();
  auto again = connect_tls(server, certs_);
  ASSERT_TRUE(wait_until([&] { return zcard(*again) == 0 && xlen(*again) == 100; }, 30s))
      << "zcard " << zcard(*again) << " xlen " << xlen(*again) << "\n" << tail_lines(relay.output(), 40);
  expect_exactly_once(xrange_all(*again, "expiry:stream"), payloads(tasks));
  EXPECT_TRUE(relay.running());
  wait_relay_ready(*again, "r1", relay);
  EXPECT_EQ(relay.terminate(), 0) << tail_lines(relay.output(), 40);
}

}  // namespace
}  // namespace expiry::test
