// The demo's order flow on a 3 + 3 Redis Cluster: order-sim (orders at order:{b}:<id>, timeouts
// into their buckets, whose streams NS:{b}:stream the canceller reads), one expiry-relay and one
// order-canceller, all given the same seed URL. Nothing paid is cancelled, nothing unpaid missed.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "functions/key_layout.h"
#include "harness/child_process.h"
#include "io/sync/cluster_client.h"
#include "orders/order_keys.h"
#include "redis/hash_slot.h"
#include "shared_cluster_test.h"
#include "support/redis_cluster.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

constexpr int kBuckets = 64;

RedisCluster*& g_cluster = shared_cluster();


class OrderSimCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(g_cluster, nullptr);
    g_cluster->wait_cluster_ok();
    client_ = std::make_unique<ClusterClient>(parse_redis_url(g_cluster->seed_url()));
  }

  std::unique_ptr<ChildProcess> start(const char* bin, const std::string& name, std::vector<std::string> args) {
    return std::make_unique<ChildProcess>(bin, std::move(args), std::vector<std::pair<std::string, std::string>>{},
                                          g_cluster->dir() + "/" + ns_ + "-" + name + ".log");
  }

  // True once relay `instance` has a subscriber on every primary (its per-node health channel).
  bool relay_subscribed_everywhere(const std::string& instance) {
    for (const auto& p : g_cluster->primaries()) {
      const std::string channel = KeyLayout(ns_).health_channel(instance + "@" + p.host + ":" + std::to_string(p.port));
      const Reply numsub = g_cluster->command(p, {"PUBSUB", "NUMSUB", channel});
      if (numsub.elements.size() != 2 || numsub.elements[1].integer != 1) return false;
    }
    return true;
  }

  // True once group workers exists on every bucket stream (the canceller creates them at start,
  // at 0, so no timeout forwarded before it reads is skipped).
  bool groups_on_every_bucket() {
    for (int b = 0; b < kBuckets; ++b) {
      const Reply groups = client_->command({"XINFO", "GROUPS", KeyLayout(ns_, b).bucket_stream()}, bucket_slot(b));
      if (groups.type != Reply::Type::Array || groups.elements.empty()) return false;
    }
    return true;
  }

  std::unique_ptr<ClusterClient> client_;
  std::string ns_ = "simc";
};

TEST_F(OrderSimCluster, NothingPaidIsCancelledAndNothingUnpaidIsMissed) {
  auto relay = start(EXPIRY_RELAY_BIN, "relay",
                     {"--redis-url", g_cluster->seed_url(), "--namespace", ns_, "--instance", "r1",
                      "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "1000"});
  ASSERT_TRUE(wait_until([&] { return relay_subscribed_everywhere("r1"); }, 60s, 100ms)) << relay->output();
  auto canceller = start(ORDER_CANCELLER_BIN, "canceller",
                         {"--redis-url", g_cluster->seed_url(), "--namespace", ns_, "--consumer", "c1",
                          "--block-ms", "200", "--idle-ms", "20", "--watchdog-interval-ms", "200",
                          "--watchdog-timeout-ms", "2000", "--min-idle-ms", "500", "--reclaim-interval-ms", "200"});
  ASSERT_TRUE(wait_until([&] { return groups_on_every_bucket(); }, 60s, 200ms)) << canceller->output();

  const std::string summary_path = g_cluster->dir() + "/" + ns_ + "-summary.json";
  auto sim = start(ORDER_SIM_BIN, "sim",
                   {"--redis-url", g_cluster->seed_url(), "--namespace", ns_, "--run-id", "c", "--rate", "50",
                    "--duration-ms", "4000", "--timeout-ms", "1500", "--grace-ms", "5000", "--summary-json",
                    summary_path});
  const auto rc = sim->wait_exit(120s);
  ASSERT_TRUE(rc.has_value()) << sim->output();
  std::printf("%s", sim->output().c_str());
  EXPECT_EQ(*rc, 0) << sim->output() << "\n" << canceller->output() << "\n" << relay->output();

  std::ifstream in(summary_path);
  std::stringstream text;
  text << in.rdbuf();
  const auto summary = nlohmann::json::parse(text.str());
  EXPECT_EQ(summary["wrongly_cancelled"], 0);
  EXPECT_EQ(summary["missed"], 0);
  EXPECT_GE(summary["created"].get<int>(), 150);
  EXPECT_GT(summary["cancelled"].get<int>(), 0);
  EXPECT_GT(summary["paid"].get<int>(), 0);
  EXPECT_EQ(summary["created"].get<int>(),
            summary["cancelled"].get<int>() + summary["paid"].get<int>());

  // The orders live at their bucket's key, on the node of their timeout's bucket stream.
  const OrderKeyScheme scheme{true, kBuckets};
  const std::string key = order_key("c-0", scheme);
  EXPECT_EQ(key, "order:{" + std::to_string(bucket_of("order:c-0", kBuckets)) + "}:c-0");
  const Reply status = client_->command({"HGET", key, "status"}, key_hash_slot(key));
  EXPECT_TRUE(status.str == "paid" || status.str == "cancelled") << status.describe();
  // No timeout went to the single-Redis stream.
  EXPECT_EQ(client_->command({"EXISTS", "orders:timeouts"}, key_hash_slot("orders:timeouts")).integer, 0);

  EXPECT_EQ(canceller->terminate(), 0) << canceller->output();
  EXPECT_EQ(relay->terminate(), 0) << relay->output();
}

}  // namespace
}  // namespace expiry::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new expiry::test::SharedClusterEnvironment);
  return RUN_ALL_TESTS();
}
