// The console's reads over large payloads (issue: reads bounded in bytes as well as entries):
// four console tabs' reads at once, over a stream and a dead-letter stream of 64 KiB payloads,
// must neither stall Redis nor grow expiry-api. Prints the figures it asserts on.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "integration/api/api_harness.h"
#include "support/redis_client.h"
#include "support/sanitizer.h"

namespace expiry::test {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t kPayloadBytes = 64 * 1024;
constexpr int kForwarded = 2000;  // the overview's activity sample reads up to 2,000 entries
constexpr int kDead = 1000;       // its dead-letter reasons up to 1,000

// The peak resident set of process `pid` in bytes (VmHWM), or -1.
long long peak_rss_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

TEST(ApiConsoleLoadTest, FourOverviewsOverLargePayloadsNeitherStallRedisNorGrowTheApi) {
  RedisServer server;
  TestConnection redis(server.host(), server.port());
  const std::string payload(kPayloadBytes, 'x');
  const long long now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  for (int batch = 0; batch < kForwarded; batch += 100) {
    std::vector<std::vector<std::string>> adds;
    for (int i = batch; i < batch + 100; ++i) {
      const std::string t = std::to_string(now - 1000 + i % 500);
      adds.push_back({"XADD", "expiry:stream", "*", "id", "big-" + std::to_string(i), "due_ms", t, "fired_ms", t,
                      "created_ms", std::to_string(now - 60'000), "payload", payload});
      if (i < kDead) {
        adds.push_back({"XADD", "expiry:stream:dead", "*", "id", "dead-" + std::to_string(i), "reason",
                        i % 2 ? "handler-failed" : "late", "deliveries", "5", "payload", payload});
      }
    }
    pipeline(redis, adds);
  }
  ApiProcess api(server);
  // A read of each kind first: the figures are right, not only cheap.
  const HttpAnswer first = api.call({"GET", "/v1/overview", kReadToken});
  ASSERT_EQ(first.status, 200) << first.body;
  const json overview = json::parse(first.body);
  EXPECT_EQ(overview["dead"]["total"], kDead);
  EXPECT_GT(overview["dead"]["scanned"].get<long long>(), 0);
  EXPECT_GT(overview["activity"]["sampled"].get<long long>(), 0);
  EXPECT_GT(overview["activity"]["forwarded_per_second"].get<double>(), 0.0);
  const HttpAnswer state = api.call({"GET", "/v1/tasks/big-" + std::to_string(kForwarded - 1) + "/state", kReadToken});
  ASSERT_EQ(state.status, 200) << state.body;
  const json newest = json::parse(state.body);
  EXPECT_EQ(newest["state"], "fired");
  EXPECT_EQ(newest["fired"]["fields"]["payload"].get<std::string>().size(), kPayloadBytes);  // the entry, whole
  const HttpAnswer dead = api.call({"GET", "/v1/dead?limit=1000", kReadToken});
  ASSERT_EQ(dead.status, 200) << dead.body;
  const json listed = json::parse(dead.body);
  ASSERT_GT(listed["count"].get<long long>(), 0);
  EXPECT_EQ(listed["entries"][0]["task_id"], "dead-0");  // the oldest first, none skipped
  for (size_t i = 0; i < listed["entries"].size(); ++i) {
    ASSERT_EQ(listed["entries"][i]["task_id"], "dead-" + std::to_string(i));
  }

  // Four tabs, each reading the overview, an unknown task's state (both streams scanned) and the
  // dead letters, three times; a PING every millisecond beside them.
  std::atomic<bool> reading{true};
  long long ping_max_us = 0;
  long long pings = 0;
  std::thread pinger([&] {
    TestConnection probe(server.host(), server.port());
    while (reading) {
      const auto start = Clock::now();
      probe.command({"PING"});
      const long long us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
      ping_max_us = std::max(ping_max_us, us);
      ++pings;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::atomic<int> failures{0};
  std::vector<std::thread> tabs;
  for (int t = 0; t < 4; ++t) {
    tabs.emplace_back([&] {
      for (int round = 0; round < 3; ++round) {
        for (const std::string path : {"/v1/overview", "/v1/tasks/no-such-task/state", "/v1/dead?limit=100"}) {
          if (api.call({"GET", path, kReadToken}).status != 200) ++failures;
        }
      }
    });
  }
  for (auto& t : tabs) t.join();
  reading = false;
  pinger.join();
  const long long rss = peak_rss_bytes(api.child().pid());
  std::printf("4 tabs x 3 rounds over %d + %d entries of 64 KiB: PING max %.1f ms over %lld pings, "
              "expiry-api peak RSS %.1f MB\n",
              kForwarded, kDead, static_cast<double>(ping_max_us) / 1000.0, pings,
              static_cast<double>(rss) / 1048576.0);
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LT(ping_max_us, 100'000);
  ASSERT_GT(rss, 0);
  if (!kAddressSanitized) EXPECT_LT(rss, 64LL << 20);
}

}  // namespace
}  // namespace expiry::test
