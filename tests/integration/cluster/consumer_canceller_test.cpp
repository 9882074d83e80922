// order-canceller on a 3+3 Redis Cluster (ClusterConsumer): it reads every bucket stream
// NS:{b}:stream on every primary, cancels each order once and acknowledges its entry,
// dead-letters a poison entry into its bucket's NS:{b}:dead, retries a failed cancel through the
// relay in its bucket, and loses nothing across a manual failover of a primary.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "functions/key_layout.h"
#include "harness/child_process.h"
#include "orders/order_keys.h"
#include "redis/hash_slot.h"
#include "redis/redis_error.h"
#include "support/redis_client.h"
#include "support/redis_cluster.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

constexpr int kBuckets = 16;
const std::string kNs = "expiry";
const OrderKeyScheme kScheme{true, kBuckets};

class ClusterCancellerTest : public ::testing::Test {
 protected:
  static RedisCluster::Options options() {
    RedisCluster::Options o;
    o.node_timeout = 2000ms;
    return o;
  }

  void SetUp() override {
    const std::string key = KeyLayout(kNs).buckets_key();
    on_slot(key_hash_slot(key), {"SET", key, std::to_string(kBuckets)});
  }

  // `argv` on the primary of `slot`, over a kept connection per node; a redirection or a lost
  // connection reads the map again.
  Reply on_slot(int slot, const std::vector<std::string>& argv) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      if (!map_) map_ = cluster_.slot_map();
      const NodeAddress* primary = map_->primary_of(slot);
      if (primary == nullptr) throw std::runtime_error("slot " + std::to_string(slot) + " has no primary");
      auto& conn = conns_[primary->port];
      try {
        if (!conn) conn = connect_redis(primary->host, primary->port);
        Reply r = conn->command(argv);
        const auto kind = classify(r);
        if (kind == RedisErrorKind::Moved || kind == RedisErrorKind::ClusterDown || kind == RedisErrorKind::TryAgain) {
          map_.reset();
          std::this_thread::sleep_for(50ms);
          continue;
        }
        return r;
      } catch (const std::exception&) {
        conns_.erase(primary->port);
        map_.reset();
        std::this_thread::sleep_for(100ms);
      }
    }
    throw std::runtime_error("no primary of slot " + std::to_string(slot) + " answered");
  }
  Reply on_bucket(int bucket, const std::vector<std::string>& argv) { return on_slot(bucket_slot(bucket), argv); }

  std::unique_ptr<ChildProcess> start_canceller(const std::string& name, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--redis-url", cluster_.seed_url(), "--consumer", name, "--namespace", kNs,
                                     "--min-idle-ms", "500", "--reclaim-interval-ms", "100", "--max-deliveries", "2",
                                     "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000",
                                     "--block-ms", "200", "--idle-ms", "20", "--safety-poll-ms", "500"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ChildProcess>(ORDER_CANCELLER_BIN, args,
                                          std::vector<std::pair<std::string, std::string>>{},
                                          cluster_.dir() + "/canceller-" + name + ".log");
  }

  // Creates pending order `id` and appends its fired timeout to its bucket's stream, as the
  // relay would. Returns the bucket.
  int add_order(const std::string& id) {
    const std::string task_id = order_task_id(id);
    const int b = bucket_of(task_id, kBuckets);
    on_bucket(b, {"HSET", order_key(id, kScheme), "status", "pending"});
    const auto r = on_bucket(b, {"XADD", KeyLayout(kNs, b).bucket_stream(), "*", "id", task_id, "payload",
                                 nlohmann::json{{"order_id", id}}.dump(), "due_ms", "1000", "fired_ms", "1001", "via",
                                 "sweep"});
    EXPECT_NE(r.type, Reply::Type::Error) << r.str;
    ++added_[b];
    return b;
  }

  std::string status_of(const std::string& id) {
    return on_bucket(bucket_of(order_task_id(id), kBuckets), {"HGET", order_key(id, kScheme), "status"}).str;
  }

  // Every entry added is read by the group and none is pending, in every bucket.
  bool all_acked() {
    for (const auto& [b, n] : added_) {
      const std::string stream = KeyLayout(kNs, b).bucket_stream();
      auto pending = on_bucket(b, {"XPENDING", stream, "workers"});
      if (pending.type != Reply::Type::Array || pending.elements.empty() || pending.elements[0].integer != 0) {
        return false;
      }
      auto groups = on_bucket(b, {"XINFO", "GROUPS", stream});
      if (groups.type != Reply::Type::Array || groups.elements.empty()) return false;
      const auto& kv = groups.elements[0].elements;
      long long read = -1;
      for (size_t i = 0; i + 1 < kv.size(); i += 2) {
        if (kv[i].str == "entries-read") read = kv[i + 1].integer;
      }
      if (read != n) return false;
    }
    return true;
  }

  RedisCluster cluster_{options()};
  std::optional<SlotMap> map_;                              // as last read
  std::map<int, std::unique_ptr<SyncConnection>> conns_;    // by port
  std::map<int, long long> added_;                          // entries added, by bucket
};

TEST_F(ClusterCancellerTest, HandlesEveryBucketStreamOnEveryPrimaryOnce) {
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i) ids.push_back("c" + std::to_string(i));
  for (int i = 0; i < 100; ++i) add_order(ids[i]);  // before the canceller: its groups start at 0
  auto canceller = start_canceller("c1");
  for (int i = 100; i < 200; ++i) add_order(ids[i]);
  ASSERT_EQ(added_.size(), static_cast<size_t>(kBuckets)) << "the ids should cover every bucket";
  std::map<int, int> primaries_used;
  const SlotMap map = cluster_.slot_map();
  for (const auto& [b, n] : added_) primaries_used[map.primary_of(bucket_slot(b))->port]++;
  ASSERT_EQ(primaries_used.size(), 3u);

  ASSERT_TRUE(wait_until(
      [&] {
        for (const auto& id : ids) {
          if (status_of(id) != "cancelled") return false;
        }
        return true;
      },
      30s))
      << canceller->output();
  ASSERT_TRUE(wait_until([&] { return all_acked(); }, 30s)) << canceller->output();
  EXPECT_EQ(canceller->terminate(), 0);
  // Exactly once: no order met an already cancelled status.
  EXPECT_NE(canceller->output().find("cancelled=200 skipped_paid=0 already_cancelled=0 missing=0 failed=0"),
            std::string::npos)
      << canceller->output();
}

TEST_F(ClusterCancellerTest, PoisonEntryIsDeadLetteredIntoItsBucketsDeadStream) {
  auto canceller = start_canceller("c1");
  const int b = 5;
  const std::string stream = KeyLayout(kNs, b).bucket_stream();
  const std::string dead = KeyLayout(kNs, b).bucket_dead_stream();
  const auto poison = on_bucket(b, {"XADD", stream, "*", "id", "not-an-order", "payload", "x", "due_ms", "1",
                                    "fired_ms", "1", "via", "sweep"});
  ASSERT_EQ(poison.type, Reply::Type::String) << poison.str;
  ++added_[b];
  add_order("good-1");
  ASSERT_TRUE(wait_until([&] { return on_bucket(b, {"XLEN", dead}).integer == 1; }, 30s)) << canceller->output();
  auto entries = on_bucket(b, {"XRANGE", dead, "-", "+"});
  ASSERT_EQ(entries.elements.size(), 1u);
  std::map<std::string, std::string> fields;
  const auto& kv = entries.elements[0].elements[1].elements;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) fields[kv[i].str] = kv[i + 1].str;
  EXPECT_EQ(fields["original_id"], poison.str);
  EXPECT_EQ(fields["original_stream"], stream);
  EXPECT_EQ(fields["id"], "not-an-order");
  EXPECT_EQ(fields["deliveries"], "1");
  EXPECT_EQ(fields["reason"], "rejected: no order id in task not-an-order");
  // Rejected (it names no order): dead-lettered at once, never scheduled again.
  EXPECT_EQ(on_bucket(b, {"ZSCORE", KeyLayout(kNs, b).schedule_key(), "not-an-order"}).type, Reply::Type::Nil);
  EXPECT_TRUE(wait_until([&] { return all_acked(); }, 30s)) << canceller->output();
  EXPECT_EQ(status_of("good-1"), "cancelled");
  EXPECT_EQ(canceller->terminate(), 0);
}

// A failed cancel is retried through the relay in the entry's own bucket (its slot): the task is
// scheduled again there with attempt 2, the relay forwards it into the same bucket stream, and
// the second failure (the last of --max-deliveries 2) moves it to that bucket's dead letters.
TEST_F(ClusterCancellerTest, AFailedCancelIsRetriedInItsBucketThenDeadLettered) {
  auto canceller = start_canceller("c1", {"--retry-base-ms", "200"});
  auto relay = std::make_unique<ChildProcess>(
      EXPIRY_RELAY_BIN,
      std::vector<std::string>{"--redis-url", cluster_.seed_url(), "--namespace", kNs, "--instance", "r1",
                               "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "2000"},
      std::vector<std::pair<std::string, std::string>>{}, cluster_.dir() + "/relay-r1.log");
  const std::string id = "r1";
  const std::string task_id = order_task_id(id);
  const int b = bucket_of(task_id, kBuckets);
  const KeyLayout keys(kNs, b);
  on_bucket(b, {"SET", order_key(id, kScheme), "not a hash"});  // order_cancel fails: WRONGTYPE
  ASSERT_NE(on_bucket(b, {"XADD", keys.bucket_stream(), "*", "id", task_id, "payload",
                          nlohmann::json{{"order_id", id}}.dump(), "due_ms", "1000", "fired_ms", "1001", "via", "sweep"})
                .type,
            Reply::Type::Error);
  ASSERT_TRUE(wait_until([&] { return on_bucket(b, {"XLEN", keys.bucket_dead_stream()}).integer == 1; }, 60s))
      << canceller->output() << relay->output();
  const auto dead = on_bucket(b, {"XRANGE", keys.bucket_dead_stream(), "-", "+"});
  std::map<std::string, std::string> fields;
  const auto& kv = dead.elements.at(0).elements.at(1).elements;
  for (size_t i = 0; i + 1 < kv.size(); i += 2) fields[kv[i].str] = kv[i + 1].str;
  EXPECT_EQ(fields["id"], task_id);
  EXPECT_EQ(fields["attempt"], "2") << "the relay forwarded the retry with its attempt";
  EXPECT_EQ(fields["original_stream"], keys.bucket_stream());
  EXPECT_NE(fields["reason"].find("failed 2 attempts"), std::string::npos) << fields["reason"];
  // The first delivery and the retry, both in the bucket's own stream; nothing left scheduled.
  const auto entries = on_bucket(b, {"XRANGE", keys.bucket_stream(), "-", "+"});
  EXPECT_EQ(entries.elements.size(), 2u);
  EXPECT_EQ(on_bucket(b, {"ZSCORE", keys.schedule_key(), task_id}).type, Reply::Type::Nil);
  added_[b] = 2;
  EXPECT_TRUE(wait_until([&] { return all_acked(); }, 30s)) << canceller->output();
  EXPECT_EQ(canceller->terminate(), 0);
}

TEST_F(ClusterCancellerTest, ManualFailoverOfAPrimaryLosesNothing) {
  auto canceller = start_canceller("c1");
  std::vector<std::string> ids;
  for (int i = 0; i < 300; ++i) ids.push_back("f" + std::to_string(i));
  for (int i = 0; i < 150; ++i) add_order(ids[i]);
  // Fail over the primary of bucket 0 while the canceller works.
  const auto victim = cluster_.primary_for_slot(bucket_slot(0));
  const auto replicas = cluster_.slot_map().replicas_of(NodeAddress{victim.host, victim.port});
  ASSERT_FALSE(replicas.empty());
  RedisCluster::Node replica;
  for (const auto& n : cluster_.replicas()) {
    if (n.port == replicas.front().port) replica = n;
  }
  ASSERT_GT(replica.port, 0);
  cluster_.manual_failover(replica);
  ASSERT_EQ(cluster_.primary_for_slot(bucket_slot(0)).port, replica.port);
  for (int i = 150; i < 300; ++i) add_order(ids[i]);
  ASSERT_TRUE(wait_until(
      [&] {
        for (const auto& id : ids) {
          if (status_of(id) != "cancelled") return false;
        }
        return true;
      },
      60s))
      << canceller->output();
  ASSERT_TRUE(wait_until([&] { return all_acked(); }, 60s)) << canceller->output();
  EXPECT_EQ(canceller->terminate(), 0);
  EXPECT_NE(canceller->output().find("cancelled=300"), std::string::npos) << canceller->output();
}

}  // namespace
}  // namespace expiry::test
