// Self tests of RedisCluster (needs redis-server and redis-cli: support/server_binaries.h). One
// cluster is shared by the tests that leave it healthy; each test restores what it changes.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "redis/hash_slot.h"
#include "redis/redis_error.h"
#include "support/redis_client.h"
#include "support/redis_cluster.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;
using Role = RedisCluster::Role;

class RedisClusterTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { cluster_ = new RedisCluster(); }
    static void TearDownTestSuite() {
        delete cluster_;
        cluster_ = nullptr;
    }
    static RedisCluster* cluster_;
};
RedisCluster* RedisClusterTest::cluster_ = nullptr;

// A primary other than `node`.
RedisCluster::Node other_primary(const RedisCluster& cluster, const RedisCluster::Node& node) {
    for (const auto& p : cluster.primaries()) {
        if (p.index != node.index) return p;
    }
    throw std::runtime_error("no other primary");
}

TEST_F(RedisClusterTest, ThreePrimariesAndThreeReplicasServeEverySlot) {
    const auto nodes = cluster_->nodes();
    ASSERT_EQ(nodes.size(), 6u);
    int primaries = 0, replicas = 0;
    std::set<std::string> ids;
    for (const auto& n : nodes) {
        EXPECT_EQ(n.host, "127.0.0.1");
        EXPECT_LT(n.port + 10000, 55536 + 10000);
        EXPECT_LT(n.port, 55536);
        EXPECT_EQ(n.id.size(), 40u);
        ids.insert(n.id);
        EXPECT_NE(n.role, Role::Down);
        primaries += n.role == Role::Primary;
        replicas += n.role == Role::Replica;
        const Reply events = cluster_->command(n, {"CONFIG", "GET", "notify-keyspace-events"});
        ASSERT_EQ(events.elements.size(), 2u);
        EXPECT_NE(events.elements[1].str.find('E'), std::string::npos);
        EXPECT_NE(events.elements[1].str.find('x'), std::string::npos);
        EXPECT_EQ(cluster_->command(n, {"CONFIG", "GET", "cluster-node-timeout"}).elements.at(1).str, "5000");
        EXPECT_EQ(cluster_->command(n, {"CONFIG", "GET", "appendonly"}).elements.at(1).str, "no");
    }
    EXPECT_EQ(ids.size(), 6u);
    EXPECT_EQ(primaries, 3);
    EXPECT_EQ(replicas, 3);
    EXPECT_EQ(cluster_->primaries().size(), 3u);
    EXPECT_EQ(cluster_->replicas().size(), 3u);
    EXPECT_TRUE(cluster_->slot_map().complete());
    EXPECT_EQ(cluster_->slot_map().primaries().size(), 3u);
    EXPECT_EQ(cluster_->seed_url().rfind("redis://127.0.0.1:", 0), 0u);
}

TEST_F(RedisClusterTest, OwnerOfASlotTakesItsKeysAndOthersRedirect) {
    for (int bucket : {0, 1, 2, 3, 40}) {
        const int slot = bucket_slot(bucket);
        const std::string key = "ns:{" + std::to_string(bucket) + "}:k";
        ASSERT_EQ(key_hash_slot(key), slot);
        const auto owner = cluster_->primary_for_slot(slot);
        EXPECT_EQ(owner.role, Role::Primary);
        EXPECT_EQ(cluster_->command(owner, {"SET", key, "v"}).str, "OK");
        const Reply moved = cluster_->command(other_primary(*cluster_, owner), {"GET", key});
        EXPECT_EQ(classify(moved), RedisErrorKind::Moved) << moved.describe();
        EXPECT_NE(moved.str.find(":" + std::to_string(owner.port)), std::string::npos) << moved.str;
    }
}

TEST_F(RedisClusterTest, MoveSlotsCarriesKeysAndStepsAnswerAsk) {
    const int slot = bucket_slot(7);
    const auto from = cluster_->primary_for_slot(slot);
    const auto to = other_primary(*cluster_, from);
    auto src = cluster_->connect(from);
    std::vector<std::vector<std::string>> sets;
    for (int i = 0; i < 50; ++i) sets.push_back({"SET", "ns:{7}:k" + std::to_string(i), std::to_string(i)});
    pipeline(*src, sets);

    cluster_->begin_migration(slot, to);
    EXPECT_EQ(cluster_->migrate_keys(slot, 10), 10);
    int asked = 0;
    for (int i = 0; i < 50; ++i) {
        const Reply r = src->command({"GET", "ns:{7}:k" + std::to_string(i)});
        if (classify(r) == RedisErrorKind::Ask) {
            ++asked;
            auto dst = cluster_->connect(to);
            dst->command({"ASKING"});
            EXPECT_EQ(dst->command({"GET", "ns:{7}:k" + std::to_string(i)}).str, std::to_string(i));
        } else {
            EXPECT_EQ(r.str, std::to_string(i));
        }
    }
    EXPECT_EQ(asked, 10);
    cluster_->finish_migration(slot);
    cluster_->wait_cluster_ok();
    EXPECT_EQ(cluster_->primary_for_slot(slot).index, to.index);
    EXPECT_EQ(integer(*cluster_->connect(to), {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)}), 50);
    EXPECT_EQ(integer(*src, {"CLUSTER", "COUNTKEYSINSLOT", std::to_string(slot)}), 0);

    cluster_->move_slots({slot}, from);  // back, in one call
    EXPECT_EQ(cluster_->primary_for_slot(slot).index, from.index);
    EXPECT_EQ(cluster_->command(from, {"GET", "ns:{7}:k49"}).str, "49");
}

TEST_F(RedisClusterTest, ManualFailoverSwapsRolesAndBack) {
    const auto replica = cluster_->replicas().front();
    const Reply role = cluster_->command(replica, {"ROLE"});
    ASSERT_GE(role.elements.size(), 3u);
    const int old_primary_port = static_cast<int>(role.elements[2].integer);

    cluster_->manual_failover(replica);
    EXPECT_EQ(cluster_->nodes()[replica.index].role, Role::Primary);
    RedisCluster::Node old_primary;
    for (const auto& n : cluster_->nodes()) {
        if (n.port == old_primary_port) old_primary = n;
    }
    ASSERT_GE(old_primary.index, 0);
    EXPECT_EQ(old_primary.role, Role::Replica);

    cluster_->manual_failover(old_primary);
    EXPECT_EQ(cluster_->nodes()[old_primary.index].role, Role::Primary);
    EXPECT_EQ(cluster_->nodes()[replica.index].role, Role::Replica);
}

TEST_F(RedisClusterTest, KilledReplicaRestartsWithItsIdentity) {
    const auto replica = cluster_->replicas().back();
    const pid_t pid = replica.pid;
    cluster_->kill_hard(replica);
    EXPECT_FALSE(cluster_->running(replica));
    EXPECT_EQ(cluster_->nodes()[replica.index].role, Role::Down);
    cluster_->restart(replica);
    EXPECT_NE(cluster_->node(replica.index).pid, pid);
    cluster_->wait_cluster_ok();
    EXPECT_EQ(cluster_->command(replica, {"CLUSTER", "MYID"}).str, replica.id);
    EXPECT_EQ(cluster_->nodes()[replica.index].role, Role::Replica);
}

TEST(RedisClusterLifetime, DestructorStopsEveryNodeAndRemovesDir) {
    std::vector<pid_t> pids;
    std::string dir;
    {
        RedisCluster::Options opts;
        opts.node_timeout = 2000ms;
        opts.extra_config_lines = {"hz 20"};
        RedisCluster cluster(opts);
        dir = cluster.dir();
        for (const auto& n : cluster.nodes()) {
            pids.push_back(n.pid);
            EXPECT_EQ(cluster.command(n, {"CONFIG", "GET", "hz"}).elements.at(1).str, "20");
        }
    }
    EXPECT_FALSE(std::filesystem::exists(dir));
    for (pid_t pid : pids) EXPECT_NE(kill(pid, 0), 0);
}

}  // namespace
}  // namespace expiry::test
