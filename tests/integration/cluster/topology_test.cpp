// ClusterTopology against a real 3+3 cluster: the first map, a manual failover, and a killed
// seed (it moves on to another node and publishes the map where the seed's replica took over).
#include <gtest/gtest.h>

#include <chrono>

#include "integration/io/loop_harness.h"
#include "io/cluster_topology.h"
#include "support/redis_cluster.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

RedisCluster::Options fast_failover() {
  RedisCluster::Options o;
  o.node_timeout = 2000ms;
  return o;
}

ClusterTopology::Options topology_options(const RedisCluster::Node& seed) {
  ClusterTopology::Options o;
  o.seed.host = seed.host;
  o.seed.port = seed.port;
  o.client_name = "topology-test";
  o.connect_timeout = 500ms;
  o.backoff.initial = 20ms;
  o.backoff.max = 200ms;
  o.refresh_interval = 300ms;
  return o;
}

// A replica of `primary`, per the cluster's own map.
RedisCluster::Node replica_of(RedisCluster& cluster, const RedisCluster::Node& primary) {
  const auto replicas = cluster.slot_map().replicas_of(NodeAddress{primary.host, primary.port});
  for (const auto& n : cluster.replicas()) {
    for (const auto& r : replicas) {
      if (r.port == n.port) return n;
    }
  }
  throw std::runtime_error("no replica of " + std::to_string(primary.port));
}

// The first slot `node` serves in `map`.
int first_slot_of(const SlotMap& map, const RedisCluster::Node& node) {
  for (const auto& r : map.ranges()) {
    if (r.primary.port == node.port) return r.first;
  }
  return -1;
}

TEST(ClusterTopology, PublishesTheMapAndFollowsAManualFailover) {
  RedisCluster cluster(fast_failover());
  LoopHarness h;
  const auto primaries = cluster.primaries();
  ClusterTopology topology(h.loop, topology_options(primaries.front()));
  int changes = 0;
  SlotMap last;
  topology.set_on_change([&](const SlotMap& m) {
    ++changes;
    last = m;
  });
  topology.start();
  ASSERT_TRUE(h.run_until([&] { return changes > 0; }, "a first map"));
  ASSERT_NE(topology.map(), nullptr);
  EXPECT_TRUE(last.complete());
  EXPECT_EQ(last.primaries().size(), 3u);

  const auto victim = primaries[1];
  const int slot = first_slot_of(last, victim);
  ASSERT_GE(slot, 0);
  const auto replica = replica_of(cluster, victim);
  cluster.manual_failover(replica);
  ASSERT_TRUE(h.run_until([&] { return last.primary_of(slot) && last.primary_of(slot)->port == replica.port; },
                          "the map after the failover"));
  topology.close();
}

TEST(ClusterTopology, MovesOnFromAKilledSeed) {
  RedisCluster cluster(fast_failover());
  LoopHarness h;
  const auto seed = cluster.primaries().front();
  ClusterTopology topology(h.loop, topology_options(seed));
  SlotMap last;
  int changes = 0;
  topology.set_on_change([&](const SlotMap& m) {
    ++changes;
    last = m;
  });
  topology.start();
  ASSERT_TRUE(h.run_until([&] { return changes > 0; }, "a first map"));
  const int slot = first_slot_of(last, seed);
  const auto replica = replica_of(cluster, seed);
  cluster.kill_hard(seed);
  topology.refresh("test: seed killed");
  ASSERT_TRUE(h.run_until([&] { return last.primary_of(slot) && last.primary_of(slot)->port == replica.port; },
                          "the map with the seed's replica promoted", 60000ms));
  EXPECT_NE(topology.asked_node().port, seed.port);
  EXPECT_GE(topology.node_switches(), 1u);
  topology.close();
}

TEST(ClusterTopology, EndpointAtKeepsTheSeedsCredentials) {
  RedisEndpoint seed;
  seed.host = "10.0.0.1";
  seed.port = 7000;
  seed.user = "u";
  seed.password = "p";
  const auto ep = endpoint_at(seed, NodeAddress{"10.0.0.2", 7001});
  EXPECT_EQ(ep.host, "10.0.0.2");
  EXPECT_EQ(ep.port, 7001);
  EXPECT_EQ(ep.user, "u");
  EXPECT_EQ(ep.password, "p");
}

}  // namespace
}  // namespace expiry::test
