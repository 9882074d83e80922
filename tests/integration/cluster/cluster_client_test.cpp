// ClusterClient against a real 3+3 cluster: routing, batches, MOVED after a reshard, ASK and
// TRYAGAIN during a migration driven slot by slot, the function library, WAIT and failovers.
// One cluster serves every test; each test leaves it healthy (tests that move slots or fail
// over read owners from the cluster instead of assuming them).
#include "io/sync/cluster_client.h"

#include <chrono>
#include <future>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/errors.h"
#include "config/redis_url.h"
#include "redis/hash_slot.h"
#include "redis/redis_error.h"
#include "shared_cluster_test.h"
#include "support/redis_client.h"
#include "support/redis_cluster.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;
using Type = Reply::Type;

// A library of our own, so that these tests do not depend on the expiry library.
const SyncConnection::FunctionLibrary& test_library() {
  static const SyncConnection::FunctionLibrary library{
      "#!lua name=cluster_client_test\n"
      "redis.register_function('cct_set', function(keys, args) return redis.call('SET', keys[1], args[1]) end)\n",
      "FUNCTION LOAD"};
  return library;
}

std::string key_of(int bucket, const std::string& name) { return "cct:{" + std::to_string(bucket) + "}:" + name; }

// TRYAGAIN errors a node has answered so far (INFO errorstats).
long long tryagain_count(const RedisCluster& cluster, const RedisCluster::Node& node) {
  const std::string info = cluster.command(node, {"INFO", "errorstats"}).str;
  const std::string needle = "errorstat_TRYAGAIN:count=";
  const size_t pos = info.find(needle);
  return pos == std::string::npos ? 0 : std::stoll(info.substr(pos + needle.size()));
}

class ClusterClientTest : public SharedClusterTest {
 protected:
  static RedisCluster::Node other_primary(const RedisCluster::Node& node) {
    for (const auto& p : cluster_->primaries()) {
      if (p.index != node.index) return p;
    }
    throw std::runtime_error("no other primary");
  }
};

TEST_F(ClusterClientTest, IsClusterTellsAClusterNodeFromAPlainServer) {
  auto node = cluster_->connect(cluster_->primaries().front());
  EXPECT_TRUE(ClusterClient::is_cluster(*node));
  RedisServer plain;
  TestConnection redis(plain.host(), plain.port());
  EXPECT_FALSE(ClusterClient::is_cluster(redis));
  EXPECT_THROW(ClusterClient(test_endpoint(plain.host(), plain.port()), options()), ReplyError);
}

TEST_F(ClusterClientTest, RoutesEveryBucketToItsOwnerOnAllPrimaries) {
  ClusterClient client(seed(), options());
  EXPECT_TRUE(client.slot_map().complete());
  ASSERT_EQ(client.primaries().size(), 3u);
  std::set<int> owners;
  for (int b = 0; b < 64; ++b) {
    const Reply r = client.command({"SET", key_of(b, "route"), std::to_string(b)}, bucket_slot(b));
    ASSERT_EQ(r.str, "OK") << r.describe();
    const auto owner = cluster_->primary_for_slot(bucket_slot(b));
    owners.insert(owner.index);
    EXPECT_EQ(cluster_->command(owner, {"GET", key_of(b, "route")}).str, std::to_string(b));  // no redirect
    EXPECT_EQ(client.command({"GET", key_of(b, "route")}, bucket_slot(b)).str, std::to_string(b));
  }
  EXPECT_EQ(owners.size(), 3u);
  for (const auto& p : client.primaries()) {
    EXPECT_EQ(client.command_on(p, {"PING"}).str, "PONG");
    EXPECT_GT(integer(*cluster_->connect(cluster_->primary_for_slot(client.slot_map().ranges().front().first)),
                      {"DBSIZE"}),
              0);
  }
  EXPECT_THROW(client.command({"GET", "x"}, kClusterSlots), std::invalid_argument);
}

TEST_F(ClusterClientTest, BatchAnswersInInputOrderAcrossNodes) {
  ClusterClient::Options o = options();
  o.window = 64;  // several windows per node
  ClusterClient client(seed(), o);
  std::vector<ClusterClient::Routed> sets, incrs, gets;
  for (int i = 0; i < 3000; ++i) {
    const int b = i % 64;
    sets.push_back({bucket_slot(b), {"SET", key_of(b, "batch" + std::to_string(i)), std::to_string(i)}});
    incrs.push_back({bucket_slot(b), {"INCR", key_of(b, "counter")}});
    gets.push_back({bucket_slot(b), {"GET", key_of(b, "batch" + std::to_string(i))}});
  }
  for (int b = 0; b < 64; ++b) client.command({"DEL", key_of(b, "counter")}, bucket_slot(b));
  for (const auto& r : client.batch(sets)) ASSERT_EQ(r.str, "OK") << r.describe();
  const auto got = client.batch(gets);
  ASSERT_EQ(got.size(), 3000u);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(got[i].str, std::to_string(i));
  const auto counted = client.batch(incrs);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(counted[i].integer, i / 64 + 1) << i;  // in order per node
  EXPECT_TRUE(client.batch({}).empty());
  // An error reply is an answer, in its place.
  const auto mixed = client.batch({{bucket_slot(1), {"GET", key_of(1, "batch1")}},
                                   {bucket_slot(1), {"LPUSH", key_of(1, "batch1"), "x"}},
                                   {bucket_slot(2), {"GET", key_of(2, "batch2")}}});
  EXPECT_EQ(mixed[0].str, "1");
  EXPECT_EQ(classify(mixed[1]), RedisErrorKind::WrongType);
  EXPECT_EQ(mixed[2].str, "2");
}

TEST_F(ClusterClientTest, StaleMapFollowsMovedAfterAReshard) {
  const int bucket = 5;
  const int slot = bucket_slot(bucket);
  ClusterClient client(seed(), options());
  ClusterClient batcher(seed(), options());
  ASSERT_EQ(client.command({"SET", key_of(bucket, "moved"), "before"}, slot).str, "OK");
  const auto from = cluster_->primary_for_slot(slot);
  const auto to = other_primary(from);
  ASSERT_EQ(client.slot_map().primary_of(slot)->port, from.port);

  cluster_->move_slots({slot}, to);
  ASSERT_EQ(client.slot_map().primary_of(slot)->port, from.port);  // still stale
  EXPECT_EQ(client.command({"GET", key_of(bucket, "moved")}, slot).str, "before");
  EXPECT_EQ(client.slot_map().primary_of(slot)->port, to.port);  // refreshed by the MOVED
  const auto replies = batcher.batch({{slot, {"SET", key_of(bucket, "moved"), "after"}},
                                      {bucket_slot(0), {"SET", key_of(0, "moved"), "x"}},
                                      {slot, {"GET", key_of(bucket, "moved")}}});
  EXPECT_EQ(replies[0].str, "OK");
  EXPECT_EQ(replies[1].str, "OK");
  EXPECT_EQ(replies[2].str, "after");
  EXPECT_EQ(batcher.slot_map().primary_of(slot)->port, to.port);

  cluster_->move_slots({slot}, from);
  EXPECT_EQ(client.command({"GET", key_of(bucket, "moved")}, slot).str, "after");
}

TEST_F(ClusterClientTest, AskAndTryAgainDuringAMigrationSlotBySlot) {
  const int bucket = 9;
  const int slot = bucket_slot(bucket);
  ClusterClient client(seed(), options());
  std::vector<ClusterClient::Routed> sets;
  for (int i = 0; i < 200; ++i) sets.push_back({slot, {"SET", key_of(bucket, "m" + std::to_string(i)), std::to_string(i)}});
  for (const auto& r : client.batch(sets)) ASSERT_EQ(r.str, "OK");
  const auto from = cluster_->primary_for_slot(slot);
  const auto to = other_primary(from);

  cluster_->begin_migration(slot, to);
  struct Finish {  // a failed assertion must not leave the slot half moved for the next tests
    ~Finish() {
      if (!done) cluster_->finish_migration(slot);
    }
    int slot;
    bool done = false;
  } finish{slot};
  ASSERT_EQ(cluster_->migrate_keys(slot, 80), 80);
  // Keys moved answer ASK at the source; the client asks the target and the map stays.
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(client.command({"GET", key_of(bucket, "m" + std::to_string(i))}, slot).str, std::to_string(i));
  EXPECT_EQ(client.slot_map().primary_of(slot)->port, from.port);
  std::vector<ClusterClient::Routed> gets;
  for (int i = 0; i < 200; ++i) gets.push_back({slot, {"GET", key_of(bucket, "m" + std::to_string(i))}});
  const auto got = client.batch(gets);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(got[i].str, std::to_string(i));
  // A new key of the slot is created on the target (ASK).
  EXPECT_EQ(client.command({"SET", key_of(bucket, "new"), "n"}, slot).str, "OK");
  {
    auto target = cluster_->connect(to);
    target->command({"ASKING"});
    EXPECT_EQ(integer(*target, {"EXISTS", key_of(bucket, "new")}), 1);
  }

  // A multi-key command over a moved and a not yet moved key answers TRYAGAIN until the slot is
  // done; the client keeps retrying meanwhile.
  const Reply at_source = cluster_->command(from, {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "1000"});
  const std::set<std::string> kept(
      [&] {
        std::set<std::string> keys;
        for (const auto& k : at_source.elements) keys.insert(k.str);
        return keys;
      }());
  std::string moved_key, kept_key;
  for (int i = 0; i < 200; ++i) {
    const std::string k = key_of(bucket, "m" + std::to_string(i));
    (kept.count(k) ? kept_key : moved_key) = k;
  }
  ASSERT_FALSE(moved_key.empty());
  ASSERT_FALSE(kept_key.empty());
  const long long tryagain_before = tryagain_count(*cluster_, from);
  auto mget = std::async(std::launch::async, [&] {
    ClusterClient own(seed(), options());
    return own.command({"MGET", moved_key, kept_key}, slot);
  });
  ASSERT_TRUE(wait_until([&] { return tryagain_count(*cluster_, from) > tryagain_before; }, 10s));
  EXPECT_EQ(mget.wait_for(0s), std::future_status::timeout);
  cluster_->finish_migration(slot);
  finish.done = true;
  const Reply both = mget.get();
  ASSERT_EQ(both.type, Type::Array) << both.describe();
  ASSERT_EQ(both.elements.size(), 2u);
  EXPECT_FALSE(both.elements[0].str.empty());
  EXPECT_FALSE(both.elements[1].str.empty());

  cluster_->wait_cluster_ok();
  EXPECT_EQ(client.command({"GET", key_of(bucket, "new")}, slot).str, "n");
  EXPECT_EQ(client.slot_map().primary_of(slot)->port, to.port);
  cluster_->move_slots({slot}, from);
}

TEST_F(ClusterClientTest, FunctionsLoadOnDemandAndEverywhere) {
  for (const auto& p : cluster_->primaries()) ASSERT_EQ(cluster_->command(p, {"FUNCTION", "FLUSH"}).str, "OK");
  ClusterClient client(seed(), options());
  const int slot = bucket_slot(3);
  const auto owner = cluster_->primary_for_slot(slot);
  EXPECT_EQ(client.fcall({"FCALL", "cct_set", "1", key_of(3, "f"), "v"}, slot, test_library()).str, "OK");
  for (const auto& p : cluster_->primaries()) {
    const Reply list = cluster_->command(p, {"FUNCTION", "LIST", "LIBRARYNAME", "cluster_client_test"});
    EXPECT_EQ(list.elements.size(), p.index == owner.index ? 1u : 0u) << p.port;
  }
  // A batch loads it where it is missing.
  std::vector<ClusterClient::Routed> calls;
  for (int b = 0; b < 64; ++b) calls.push_back({bucket_slot(b), {"FCALL", "cct_set", "1", key_of(b, "f"), "w"}});
  for (const auto& r : client.batch(calls, test_library())) EXPECT_EQ(r.str, "OK") << r.describe();
  // Without a library a missing function is an answer.
  for (const auto& p : cluster_->primaries()) cluster_->command(p, {"FUNCTION", "FLUSH"});
  EXPECT_TRUE(client.batch(calls)[0].failed());

  client.load_library_everywhere();
  for (const auto& p : cluster_->primaries()) {
    const Reply list = cluster_->command(p, {"FUNCTION", "LIST", "LIBRARYNAME", "expiry_v1"});
    EXPECT_EQ(list.elements.size(), 1u) << p.port;
  }
  for (const auto& p : cluster_->primaries()) cluster_->command(p, {"FUNCTION", "FLUSH"});
  const Reply version = client.fcall({"FCALL", "expiry_version", "0"}, bucket_slot(11));
  EXPECT_FALSE(version.failed()) << version.describe();
}

TEST_F(ClusterClientTest, WaitReplicasCountsTheNodesWrittenTo) {
  ClusterClient client(seed(), options());
  EXPECT_EQ(client.wait_replicas(1, 100ms), 1);  // nothing written
  for (int b = 0; b < 64; ++b) client.command({"SET", key_of(b, "wait"), "x"}, bucket_slot(b));
  EXPECT_EQ(client.wait_replicas(1, 5000ms), 1);
  // More replicas than any primary has: WAIT times out with what it got.
  client.command({"SET", key_of(0, "wait"), "y"}, bucket_slot(0));
  EXPECT_EQ(client.wait_replicas(2, 200ms), 1);
}

TEST_F(ClusterClientTest, ManualFailoverIsFollowed) {
  const int bucket = 12;
  const int slot = bucket_slot(bucket);
  ClusterClient client(seed(), options());
  ASSERT_EQ(client.command({"SET", key_of(bucket, "fo"), "1"}, slot).str, "OK");
  ASSERT_EQ(client.wait_replicas(1, 5000ms), 1);
  const auto primary = cluster_->primary_for_slot(slot);
  RedisCluster::Node replica;
  for (const auto& r : cluster_->replicas()) {
    if (cluster_->command(r, {"ROLE"}).elements.at(2).integer == primary.port) replica = r;
  }
  ASSERT_GE(replica.index, 0);

  cluster_->manual_failover(replica);
  EXPECT_EQ(client.command({"INCR", key_of(bucket, "fo")}, slot).integer, 2);
  EXPECT_EQ(client.slot_map().primary_of(slot)->port, replica.port);
  EXPECT_EQ(client.wait_replicas(1, 5000ms), 1);

  cluster_->manual_failover(cluster_->node(primary.index));
  EXPECT_EQ(client.command({"INCR", key_of(bucket, "fo")}, slot).integer, 3);
  EXPECT_EQ(client.slot_map().primary_of(slot)->port, primary.port);
}

// Runs last: it breaks a primary and waits for the automatic failover (about 8 s). The primary
// is not the one ManualFailoverIsFollowed failed over: primaries refuse to vote twice for the
// same primary's failover within 2 * cluster-node-timeout.
TEST_F(ClusterClientTest, KilledPrimaryIsReplacedWithinTheRetryDeadline) {
  int bucket = 20;
  while (cluster_->primary_for_slot(bucket_slot(bucket)).index == cluster_->primary_for_slot(bucket_slot(12)).index)
    ++bucket;
  const int slot = bucket_slot(bucket);
  ClusterClient::Options o = options();
  o.retry_deadline = 30s;
  ClusterClient client(seed(), o);
  ASSERT_EQ(client.command({"SET", key_of(bucket, "kill"), "1"}, slot).str, "OK");
  ASSERT_EQ(client.wait_replicas(1, 5000ms), 1);
  ASSERT_EQ(client.command({"SET", key_of(bucket, "unwaited"), "1"}, slot).str, "OK");
  const auto primary = cluster_->primary_for_slot(slot);

  cluster_->kill_hard(primary);
  EXPECT_EQ(client.wait_replicas(1, 100ms), 0);  // the node written to is gone
  EXPECT_EQ(client.command({"INCR", key_of(bucket, "kill")}, slot).integer, 2);  // acknowledged: kept
  EXPECT_NE(client.slot_map().primary_of(slot)->port, primary.port);

  cluster_->restart(primary);
  cluster_->wait_cluster_ok();
  EXPECT_EQ(cluster_->nodes()[primary.index].role, RedisCluster::Role::Replica);
}

}  // namespace
}  // namespace expiry::test
