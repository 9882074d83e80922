// expiry-api on a 3 + 3 Redis Cluster (RedisCluster, 64 buckets): tasks PUT through the API
// whose ids land in different buckets (so different slots, on every primary), read back with
// GET, one DELETEd (404 after); an expiry-relay on the same cluster forwards each of the others
// exactly once to its own bucket stream, read directly with a ClusterClient. The API is started
// by tests/integration/api/api_harness.h, the relay as in cluster_relay_test.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "config/redis_url.h"
#include "functions/key_layout.h"
#include "integration/api/api_harness.h"
#include "io/sync/cluster_client.h"
#include "redis/hash_slot.h"
#include "support/redis_cluster.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr int kBuckets = 64;  // the cluster default

// `n` ids "<prefix><i>" in pairwise different buckets.
std::vector<std::string> ids_in_distinct_buckets(const std::string& prefix, int n, int buckets) {
  std::vector<std::string> ids;
  std::set<int> used;
  for (int i = 0; static_cast<int>(ids.size()) < n; ++i) {
    const std::string id = prefix + std::to_string(i);
    if (used.insert(bucket_of(id, buckets)).second) ids.push_back(id);
  }
  return ids;
}

// The primary (host:port) that owns `slot`, from CLUSTER SLOTS on a seed; empty if unknown.
std::string owner_of(RedisCluster& cluster, int slot) {
  const Reply slots = cluster.command(cluster.primaries().front(), {"CLUSTER", "SLOTS"});
  for (const auto& range : slots.elements) {
    if (range.elements.size() < 3) continue;
    if (slot >= range.elements[0].integer && slot <= range.elements[1].integer) {
      const auto& node = range.elements[2].elements;
      if (node.size() >= 2) return node[0].str + ":" + std::to_string(node[1].integer);
    }
  }
  return "";
}

TEST(ApiCluster, PutGetDeleteThroughTheApiAndTheRelayForwardsEachOnceToItsBucketStream) {
  RedisCluster cluster;
  cluster.wait_cluster_ok();
  const std::string ns = "apicluster";
  ApiProcess api(ApiTarget{cluster.seed_url(), cluster.dir(), ""}, {"--namespace", ns});
  auto relay = std::make_unique<ChildProcess>(
      EXPIRY_RELAY_BIN,
      std::vector<std::string>{"--redis-url", cluster.seed_url(), "--namespace", ns, "--instance", "r1",
                               "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200", "--watchdog-interval-ms",
                               "200", "--watchdog-timeout-ms", "1000"},
      std::vector<std::pair<std::string, std::string>>{}, cluster.dir() + "/relay-" + ns + ".log");

  const std::vector<std::string> ids = ids_in_distinct_buckets("api-", 9, kBuckets);
  std::set<std::string> primaries;
  for (const auto& id : ids) primaries.insert(owner_of(cluster, bucket_slot(bucket_of(id, kBuckets))));
  EXPECT_GE(primaries.size(), 2u) << "the ids should land on more than one primary";

  // Due in 8 s: read back and deleted well before the relay forwards them.
  std::map<std::string, std::string> expected;
  for (const auto& id : ids) {
    ApiCall put{"PUT", "/v1/tasks/" + id, kWriteToken, json{{"delay_ms", 8000}, {"payload", "p-" + id}}.dump()};
    const HttpAnswer r = api.call(put);
    ASSERT_EQ(r.status, 201) << id << ": " << r.body << r.error << "\n" << api.child().output();
    expected[id] = "p-" + id;
  }
  for (const auto& id : ids) {
    const HttpAnswer r = api.call({"GET", "/v1/tasks/" + id, kReadToken});
    ASSERT_EQ(r.status, 200) << id << ": " << r.body << r.error;
    const json j = json::parse(r.body, nullptr, false);
    EXPECT_EQ(j.value("id", ""), id) << r.body;
    EXPECT_EQ(j.value("payload", ""), "p-" + id) << r.body;
  }
  const std::string cancelled = ids.front();
  const HttpAnswer del = api.call({"DELETE", "/v1/tasks/" + cancelled, kWriteToken});
  EXPECT_TRUE(del.status == 200 || del.status == 204) << del.status << " " << del.body << del.error;
  EXPECT_EQ(api.call({"GET", "/v1/tasks/" + cancelled, kReadToken}).status, 404);
  expected.erase(cancelled);

  // The relay forwards the others; read every bucket stream directly.
  ClusterClient client(parse_redis_url(cluster.seed_url()));
  const auto bucket_entries = [&](int b) {
    Entries out;
    const Reply r = client.command({"XRANGE", KeyLayout(ns, b).bucket_stream(), "-", "+"}, bucket_slot(b));
    for (const auto& e : r.elements) {
      std::map<std::string, std::string> fields;
      const auto& f = e.elements[1].elements;
      for (size_t i = 0; i + 1 < f.size(); i += 2) fields[f[i].str] = f[i + 1].str;
      out.push_back(std::move(fields));
    }
    return out;
  };
  const auto forwarded = [&] {
    long long n = 0;
    for (const auto& id : ids) {
      const int b = bucket_of(id, kBuckets);
      n += client.command({"XLEN", KeyLayout(ns, b).bucket_stream()}, bucket_slot(b)).integer;
    }
    return n;
  };
  const bool all = wait_until([&] { return forwarded() >= static_cast<long long>(expected.size()); }, 120s, 50ms);
  EXPECT_TRUE(all) << forwarded() << " of " << expected.size() << " forwarded; relay:\n" << relay->output();
  // Each in its own bucket's stream, once; the deleted one nowhere; nothing left scheduled.
  Entries everything;
  for (int b = 0; b < kBuckets; ++b) {
    for (auto& e : bucket_entries(b)) {
      EXPECT_EQ(bucket_of(e["id"], kBuckets), b) << e["id"] << " in the stream of bucket " << b;
      everything.push_back(std::move(e));
    }
  }
  expect_exactly_once(everything, expected);
  for (const auto& id : ids) {
    const int b = bucket_of(id, kBuckets);
    EXPECT_EQ(client.command({"ZCARD", KeyLayout(ns, b).schedule_key()}, bucket_slot(b)).integer, 0) << id;
  }
  EXPECT_TRUE(relay->running()) << relay->output();
  EXPECT_TRUE(api.child().running()) << api.child().output();
}

}  // namespace
}  // namespace expiry::test
