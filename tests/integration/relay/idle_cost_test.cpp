// The idle relay at its default periods: what it costs Redis, and that a silently dead network
// path (no close on either side) is still found within 10 s. docs/architecture.md, "Failure
// model", states both; the benchmark's idle scenario measures the cost against a peer.
#include <gtest/gtest.h>

#include <thread>

#include "chaos/tcp_proxy.h"
#include "relay_harness.h"

namespace expiry::test {
namespace {

// Every command Redis ran since the last CONFIG RESETSTAT, inside FCALLs too, but not the
// test's own INFO and RESETSTAT.
long long commands_run(SyncConnection& redis) {
  const Reply info = redis.command({"INFO", "commandstats"});
  std::istringstream lines(info.str);
  std::string line;
  long long total = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("cmdstat_", 0) != 0 || line.rfind("cmdstat_info:", 0) == 0 ||
        line.rfind("cmdstat_config|resetstat:", 0) == 0) {
      continue;
    }
    const auto calls = line.find("calls=");
    if (calls != std::string::npos) total += std::stoll(line.substr(calls + 6));
  }
  return total;
}

std::unique_ptr<ChildProcess> start_default_relay(const RedisServer& server, const std::string& url,
                                                  std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--redis-url", url, "--instance", "idle"};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                        server.dir() + "/relay-idle.log");
}

TEST(IdleRelay, CostsRedisLessThanOneCommandPerSecondAtTheDefaultPeriods) {
  RedisServer server;
  SyncConnection redis{parse_redis_url(server.url())};
  std::vector<Task> far;
  for (int i = 0; i < 100; ++i) far.push_back({"far-" + std::to_string(i), 3600000, "p"});
  schedule_all(redis, far);
  // Retention is measured by the benchmark (its trims back off while nothing changes); here the
  // sweep and the health probe alone.
  auto relay = start_default_relay(server, server.url(), {"--stream-trim-interval-ms", "0"});
  wait_relay_ready(redis, "idle", *relay);
  ASSERT_TRUE(wait_until([&] { return redis.command({"INFO", "commandstats"}).str.find("cmdstat_zcard") !=
                                      std::string::npos; },
                         10s))
      << "no startup sweep; output:\n" << relay->output();
  redis.command({"CONFIG", "RESETSTAT"});
  const auto t0 = std::chrono::steady_clock::now();
  // The measured quantity is a count over a window, so the window is waited out.
  std::this_thread::sleep_for(20s);
  const long long run = commands_run(redis);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Two sweeps (FCALL, TIME, ZRANGE, ZCARD) and four probes (PUBLISH) in 20 s: 12.
  EXPECT_LE(static_cast<double>(run) / seconds, 1.0) << run << " commands in " << seconds << " s:\n"
                                                     << redis.command({"INFO", "commandstats"}).str;
  EXPECT_GE(run, 4) << "no sweep or probe at all?";
  EXPECT_EQ(redis.command({"ZCARD", KeyLayout("expiry").schedule_key()}).integer, 100);
}

TEST(IdleRelay, ASilentlyDeadNetworkPathIsFoundWithinTenSecondsAtTheDefaultPeriods) {
  RedisServer server;
  SyncConnection redis{parse_redis_url(server.url())};
  TcpProxy proxy(server.port());
  const std::string url = "redis://127.0.0.1:" + std::to_string(proxy.port()) + "/0";
  auto relay = start_default_relay(server, url, {"--reconnect-initial-ms", "20", "--reconnect-max-ms", "200"});
  wait_relay_ready(redis, "idle", *relay);
  const std::string before = relay->output();

  // Both connections stay open and silent: only the health probe (and the watchdog waiting for
  // its reply) can tell.
  proxy.stall();
  const auto stalled_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until([&] { return relay->output().size() > before.size() &&
                                      relay->output().find("lost", before.size()) != std::string::npos; },
                         15s))
      << relay->output();
  const double found_after = std::chrono::duration<double>(std::chrono::steady_clock::now() - stalled_at).count();
  // 5 s probe period + 3 s watchdog timeout by default; 10 s is the documented bound.
  EXPECT_LT(found_after, 10.0) << relay->output();

  // Once the path works again the relay is back, subscribed, and forwards a task.
  proxy.restore();
  ASSERT_TRUE(wait_until([&] { return relay_ready(redis, "idle"); }, 30s)) << relay->output();
  schedule_all(redis, {{"after-stall", 50, "p"}});
  ASSERT_TRUE(wait_until([&] { return redis.command({"XLEN", KeyLayout("expiry").default_stream()}).integer == 1; },
                         10s))
      << relay->output();
}

}  // namespace
}  // namespace expiry::test
