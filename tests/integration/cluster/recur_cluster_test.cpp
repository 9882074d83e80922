// A recurring schedule on a 3 + 3 Redis Cluster fired by two expiry-relay processes
// (ClusterRelay): its definition and occurrences live in the bucket of its id (CRC16(id) mod 64,
// TaskPlacement), and each occurrence reaches that bucket's stream exactly once, in order.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/redis_url.h"
#include "functions/key_layout.h"
#include "functions/recur_calls.h"
#include "harness/child_process.h"
#include "io/sync/cluster_client.h"
#include "producer/task_placement.h"
#include "recur/recur_plan.h"
#include "recur/time_zone.h"
#include "redis/redis_time.h"
#include "shared_cluster_test.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

class RecurClusterTest : public SharedClusterTest {
 protected:
  void SetUp() override {
    cluster_->wait_cluster_ok();
    client_ = std::make_unique<ClusterClient>(seed());
  }

  std::unique_ptr<ChildProcess> start_relay(const std::string& instance) {
    const std::vector<std::string> args = {"--redis-url", cluster_->seed_url(), "--namespace", kNs, "--instance",
                                           instance, "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200",
                                           "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "1000"};
    return std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                          cluster_->dir() + "/relay-" + kNs + "-" + instance + ".log");
  }

  // True once relay `instance` has a subscriber on every primary (its per-node health channel).
  bool subscribed_everywhere(const std::string& instance) {
    for (const auto& p : cluster_->primaries()) {
      const std::string channel = KeyLayout(kNs).health_channel(instance + "@" + p.host + ":" + std::to_string(p.port));
      const Reply numsub = cluster_->command(p, {"PUBSUB", "NUMSUB", channel});
      if (numsub.elements.size() != 2 || numsub.elements[1].integer != 1) return false;
    }
    return true;
  }

  static inline const std::string kNs = "crecur";
  std::unique_ptr<ClusterClient> client_;
};

TEST_F(RecurClusterTest, ARecurringScheduleFiresEachOccurrenceOnceThroughTheClusterRelays) {
  auto r1 = start_relay("r1");
  auto r2 = start_relay("r2");
  ASSERT_TRUE(wait_until([&] { return subscribed_everywhere("r1") && subscribed_everywhere("r2"); }, 60s))
      << r1->output() << r2->output();

  TaskPlacement placement;
  placement.ns = kNs;
  placement.cluster = true;
  placement.buckets = 64;
  const std::string id = "cluster-tick";
  const KeyLayout keys = placement.keys_of_task(id);
  const int slot = placement.slot_of_task(id);
  const Reply time = client_->command({"TIME"}, slot);
  const auto now = time_reply_ms(time);
  ASSERT_TRUE(now) << time.describe();
  const long long start = *now / 1000 * 1000 + 1000;
  RecurDefinition def;
  def.rule = "@every 1s";
  def.start_ms = start;
  def.payload = "on the cluster";
  def.misfire = "all";
  def.grace_ms = 5000;
  // 5 instants: the relays must top the list up for the 10 occurrences below.
  const auto inst =
      recur_instants(stored_recur_rule(def.rule, start), TimeZone::utc(), start - 1, start, std::nullopt, 5);
  const Reply set = client_->command(recur_set_argv(keys, id, def, inst), slot);
  ASSERT_TRUE(decode_recur_set(set)) << set.describe();

  const std::string stream = keys.bucket_stream();
  const auto read = [&] { return client_->command({"XRANGE", stream, "-", "+"}, slot); };
  ASSERT_TRUE(wait_until([&] { return read().elements.size() >= 10; }, 60s)) << r1->output() << r2->output();
  const Reply entries = read();
  std::vector<long long> occurrences;
  std::set<long long> seen;
  for (const auto& e : entries.elements) {
    std::map<std::string, std::string> f;
    const auto& list = e.elements[1].elements;
    for (size_t i = 0; i + 1 < list.size(); i += 2) f[list[i].str] = list[i + 1].str;
    EXPECT_EQ(f["id"], id);
    EXPECT_EQ(f["payload"], def.payload);
    EXPECT_EQ(f["recur"], "1");
    EXPECT_EQ(f["due_ms"], f["occurrence_ms"]);
    EXPECT_EQ(f.count("misfire"), 0u);
    const long long occ = std::stoll(f["occurrence_ms"]);
    EXPECT_TRUE(seen.insert(occ).second) << occ << " twice";
    occurrences.push_back(occ);
  }
  ASSERT_GE(occurrences.size(), 10u);
  for (size_t i = 0; i < occurrences.size(); ++i) EXPECT_EQ(occurrences[i], start + 1000 * static_cast<long long>(i));
  // Nothing of it landed in any other bucket.
  for (int b = 0; b < 64; ++b) {
    if (b == placement.bucket_of_task(id)) continue;
    const Reply len = client_->command({"XLEN", KeyLayout(kNs, b).bucket_stream()}, TaskPlacement::slot_of_bucket(b));
    EXPECT_EQ(len.integer, 0) << "bucket " << b;
  }
}

}  // namespace
}  // namespace expiry::test
