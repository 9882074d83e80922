// The Redis Cluster facts the design relies on (docs/redis-facts.md, issue 14),
// reproduced on a real 3+3 cluster: expired events are node-local, a PUBLISH from a Function
// reaches every node, functions loaded on primaries reach replicas and survive a failover, and a
// Function may touch one slot only.
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/redis_url.h"
#include "harness/child_process.h"
#include "io/sync/cluster_client.h"
#include "redis/hash_slot.h"
#include "redis/redis_error.h"
#include "shared_cluster_test.h"
#include "support/redis_client.h"
#include "support/redis_cluster.h"
#include "support/server_binaries.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;
using Type = Reply::Type;

const SyncConnection::FunctionLibrary& facts_library() {
  static const SyncConnection::FunctionLibrary library{
      "#!lua name=cluster_facts\n"
      "redis.register_function('cf_publish', function(keys, args)\n"
      "  return redis.call('PUBLISH', args[1], args[2]) end)\n"
      "redis.register_function('cf_set2', function(keys, args)\n"
      "  redis.call('SET', keys[1], '1'); return redis.call('SET', keys[2], '1') end)\n"
      "redis.register_function('cf_set_undeclared', function(keys, args)\n"
      "  redis.call('SET', keys[1], '1'); return redis.call('SET', args[1], '1') end)\n",
      "FUNCTION LOAD"};
  return library;
}

// A subscriber on one node: `redis-cli --csv (P)SUBSCRIBE ...` as a child process (the blocking
// client reads one reply per command sent, so it cannot read pub/sub). Its output has one CSV
// line per reply; the test payloads and channels hold no '"' or ','.
class Subscriber {
 public:
  Subscriber(const RedisCluster::Node& node, const std::string& verb, const std::vector<std::string>& channels)
      : child_(redis_cli_binary(), args(node, verb, channels)) {
    const std::string confirm = "\"" + lower(verb) + "\",";
    const bool ready = wait_until(
        [&] { return count_lines_starting(confirm) == channels.size() || !child_.running(); }, 10s);
    if (!ready || !child_.running()) throw std::runtime_error("redis-cli did not subscribe: " + child_.output());
  }

  // (channel, payload) of every message received so far, in arrival order.
  std::vector<std::pair<std::string, std::string>> messages() const {
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream lines(child_.output());
    for (std::string line; std::getline(lines, line);) {
      std::vector<std::string> fields;
      std::istringstream in(line);
      for (std::string f; std::getline(in, f, ',');) {
        if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
        fields.push_back(f);
      }
      if (fields.size() == 3 && fields[0] == "message") out.emplace_back(fields[1], fields[2]);
      if (fields.size() == 4 && fields[0] == "pmessage") out.emplace_back(fields[2], fields[3]);
    }
    return out;
  }

 private:
  static std::vector<std::string> args(const RedisCluster::Node& node, const std::string& verb,
                                       const std::vector<std::string>& channels) {
    std::vector<std::string> a{"-h", node.host, "-p", std::to_string(node.port), "--csv", verb};
    a.insert(a.end(), channels.begin(), channels.end());
    return a;
  }
  static std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }
  size_t count_lines_starting(const std::string& prefix) const {
    size_t n = 0;
    std::istringstream lines(child_.output());
    for (std::string line; std::getline(lines, line);) n += line.rfind(prefix, 0) == 0;
    return n;
  }

  mutable ChildProcess child_;
};

class ClusterFactsTest : public SharedClusterTest {
 protected:
};

std::string key_of(int bucket, const std::string& name) { return "cf:{" + std::to_string(bucket) + "}:" + name; }

TEST_F(ClusterFactsTest, ExpiredEventsAreNodeLocalAndReplicasEmitNone) {
  const auto nodes = cluster_->nodes();
  std::vector<std::unique_ptr<Subscriber>> subs;
  for (const auto& n : nodes)
    subs.push_back(std::make_unique<Subscriber>(n, "PSUBSCRIBE",
                                                std::vector<std::string>{"__keyevent@*__:expired", "cf:marker:*"}));
  ClusterClient client(seed(), options());
  std::map<int, std::set<std::string>> expected;  // node index -> keys that expire there
  for (int b = 0; b < 64; ++b) {
    const std::string key = key_of(b, "ttl");
    ASSERT_EQ(client.command({"SET", key, "x", "PX", "50"}, bucket_slot(b)).str, "OK");
    expected[cluster_->primary_for_slot(bucket_slot(b)).index].insert(key);
  }
  ASSERT_EQ(expected.size(), 3u);

  std::map<int, std::set<std::string>> seen;
  auto collect = [&] {
    seen.clear();
    for (size_t i = 0; i < subs.size(); ++i) {
      for (const auto& [channel, key] : subs[i]->messages()) {
        if (channel.rfind("cf:marker:", 0) != 0) seen[static_cast<int>(i)].insert(key);
      }
    }
  };
  // Active expiry deletes them on the primaries (and replicas receive DELs).
  ASSERT_TRUE(wait_until(
      [&] {
        collect();
        for (const auto& [node, keys] : expected) {
          if (seen[node] != keys) return false;
        }
        return true;
      },
      10s, 50ms));
  for (const auto& n : nodes) {
    if (n.role == RedisCluster::Role::Replica) {
      EXPECT_TRUE(seen[n.index].empty()) << "replica " << n.port << " emitted " << seen[n.index].size();
    } else {
      EXPECT_EQ(seen[n.index], expected[n.index]) << "primary " << n.port;  // its own keys, no others
    }
  }
  // Once a replica has applied the deletions, a marker published on it arrives after anything
  // it could have emitted for them: still no event there.
  for (const auto& n : nodes) {
    if (n.role != RedisCluster::Role::Replica) continue;
    ASSERT_TRUE(wait_until([&] { return integer(*cluster_->connect(n), {"DBSIZE"}) == 0; }, 10s));
    const std::string marker = "cf:marker:" + std::to_string(n.port);
    cluster_->command(n, {"PUBLISH", marker, "m"});
    ASSERT_TRUE(wait_until(
        [&] {
          for (const auto& [channel, payload] : subs[n.index]->messages()) {
            if (channel == marker) return true;
          }
          return false;
        },
        10s));
  }
  collect();
  for (const auto& n : nodes) {
    if (n.role == RedisCluster::Role::Replica) {
      EXPECT_TRUE(seen[n.index].empty()) << n.port;
    }
  }
}

TEST_F(ClusterFactsTest, PublishFromAFunctionReachesEveryNode) {
  const auto nodes = cluster_->nodes();
  std::vector<std::unique_ptr<Subscriber>> subs;
  for (const auto& n : nodes)
    subs.push_back(std::make_unique<Subscriber>(n, "SUBSCRIBE", std::vector<std::string>{"cf:wake"}));
  ClusterClient client(seed(), options());
  client.load_library_everywhere(facts_library());
  const auto publisher = cluster_->primaries().front();
  auto conn = cluster_->connect(publisher);
  const Reply r = conn->command({"FCALL", "cf_publish", "0", "cf:wake", "hello"});
  ASSERT_EQ(r.type, Type::Integer) << r.describe();
  EXPECT_EQ(r.integer, 1);  // counts only the subscriber on the publishing node

  auto all_got_it = [&] {
    for (const auto& sub : subs) {
      if (sub->messages().empty()) return false;
    }
    return true;
  };
  // A node whose cluster-bus link to the publisher is still being set up (a fresh cluster on a
  // busy machine; seen with Valkey 8.1 under CI's load) gets no copy: publish again, each time
  // the last one has had 5 s to arrive, until every node got one.
  int published = 1;
  for (const auto deadline = std::chrono::steady_clock::now() + 60s;
       !wait_until(all_got_it, 5s) && std::chrono::steady_clock::now() < deadline; ++published) {
    ASSERT_FALSE(conn->command({"FCALL", "cf_publish", "0", "cf:wake", "hello"}).failed());
  }
  ASSERT_TRUE(all_got_it()) << "after " << published << " publishes";
  for (size_t i = 0; i < subs.size(); ++i) {
    const auto got = subs[i]->messages();
    ASSERT_GE(got.size(), 1u) << "node " << nodes[i].port;
    ASSERT_LE(got.size(), static_cast<size_t>(published)) << "node " << nodes[i].port;
    for (const auto& m : got) {
      EXPECT_EQ(m.first, "cf:wake");
      EXPECT_EQ(m.second, "hello");
    }
  }
}

TEST_F(ClusterFactsTest, FunctionsLoadedOnPrimariesReachReplicasAndSurviveAFailover) {
  for (const auto& n : cluster_->primaries()) ASSERT_EQ(cluster_->command(n, {"FUNCTION", "FLUSH"}).str, "OK");
  ClusterClient client(seed(), options());
  client.load_library_everywhere(facts_library());
  auto has_library = [&](const RedisCluster::Node& n) {
    return cluster_->command(n, {"FUNCTION", "LIST", "LIBRARYNAME", "cluster_facts"}).elements.size() == 1;
  };
  for (const auto& n : cluster_->replicas()) {
    EXPECT_TRUE(wait_until([&] { return has_library(n); }, 10s)) << "replica " << n.port;
  }

  const auto replica = cluster_->replicas().front();
  const int old_primary_port = static_cast<int>(cluster_->command(replica, {"ROLE"}).elements.at(2).integer);
  cluster_->manual_failover(replica);
  EXPECT_TRUE(has_library(replica));
  auto promoted = cluster_->connect(replica);
  const Reply r = promoted->command({"FCALL", "cf_publish", "0", "cf:nobody", "x"});
  EXPECT_EQ(r.type, Type::Integer) << r.describe();
  for (const auto& n : cluster_->nodes()) {
    if (n.port == old_primary_port) {
      EXPECT_EQ(n.role, RedisCluster::Role::Replica);
      EXPECT_TRUE(has_library(n));
    }
  }
}

TEST_F(ClusterFactsTest, AFunctionMayTouchOneSlotOnly) {
  ClusterClient client(seed(), options());
  client.load_library_everywhere(facts_library());
  const int slot = bucket_slot(0);
  ASSERT_NE(bucket_slot(1), slot);
  auto owner = cluster_->connect(cluster_->primary_for_slot(slot));

  const Reply declared = owner->command({"FCALL", "cf_set2", "2", key_of(0, "a"), key_of(1, "b")});
  EXPECT_EQ(classify(declared), RedisErrorKind::CrossSlot) << declared.describe();
  EXPECT_EQ(declared.str.rfind("CROSSSLOT", 0), 0u) << declared.str;
  EXPECT_EQ(integer(*owner, {"EXISTS", key_of(0, "a")}), 0);  // refused before it ran

  // An undeclared key of another slot: on the same node "do not hash to the same slot", on another
  // node "non local key" (which classify() reads as a migration in progress); either way the
  // writes before it stay.
  const int here = cluster_->primary_for_slot(slot).index;
  int same_node = -1, other_node = -1;
  for (int b = 1; b < 64 && (same_node < 0 || other_node < 0); ++b) {
    (cluster_->primary_for_slot(bucket_slot(b)).index == here ? same_node : other_node) = b;
  }
  ASSERT_GE(same_node, 0);
  ASSERT_GE(other_node, 0);
  const Reply same = owner->command({"FCALL", "cf_set_undeclared", "1", key_of(0, "c"), key_of(same_node, "d")});
  EXPECT_EQ(classify(same), RedisErrorKind::CrossSlot) << same.describe();
  EXPECT_NE(same.str.find("do not hash to the same slot"), std::string::npos) << same.str;
  EXPECT_EQ(integer(*owner, {"EXISTS", key_of(0, "c")}), 1);
  const Reply other = owner->command({"FCALL", "cf_set_undeclared", "1", key_of(0, "e"), key_of(other_node, "f")});
  EXPECT_EQ(classify(other), RedisErrorKind::Migrating) << other.describe();
  EXPECT_NE(other.str.find("non local key"), std::string::npos) << other.str;
  EXPECT_EQ(integer(*owner, {"EXISTS", key_of(0, "e")}), 1);

  // Two streams of two slots in one XREADGROUP are CROSSSLOT too.
  const Reply xread =
      owner->command({"XREADGROUP", "GROUP", "g", "c", "STREAMS", key_of(0, "s"), key_of(1, "s"), ">", ">"});
  EXPECT_EQ(classify(xread), RedisErrorKind::CrossSlot) << xread.describe();
}

}  // namespace
}  // namespace expiry::test
