// expiry-api through Redis Sentinel (SentinelGroup: a master, a replica, three sentinels), on a
// namespace of 8 buckets: tasks PUT through the API in different buckets, read back with GET,
// one DELETEd (404 after); an expiry-relay through the same sentinels forwards each of the
// others exactly once to its own bucket stream, read directly on the master the sentinels name.
// The API is started by tests/integration/api/api_harness.h, the relay as in sentinel_relay_test.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "integration/api/api_harness.h"
#include "redis/hash_slot.h"
#include "support/redis_client.h"
#include "support/redis_sentinel.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

constexpr int kBuckets = 8;
const std::string kUnusedUrl = "redis://127.0.0.1:1/0";  // the sentinels name the node

std::vector<std::string> sentinel_flags(const SentinelGroup& group) {
  return {"--sentinel", group.sentinel_addresses(), "--sentinel-master", group.master_name()};
}

TEST(ApiSentinel, PutGetDeleteThroughTheApiAndTheRelayForwardsEachOnceToItsBucketStream) {
  SentinelGroup group;
  const std::string dir = group.node(0).dir();
  const std::string ns = "apisentinel";
  std::vector<std::string> api_args = sentinel_flags(group);
  api_args.insert(api_args.end(), {"--namespace", ns, "--buckets", std::to_string(kBuckets)});
  ApiProcess api(ApiTarget{kUnusedUrl, dir, ""}, api_args);

  std::vector<std::string> relay_args = {"--redis-url", kUnusedUrl};
  const auto flags = sentinel_flags(group);
  relay_args.insert(relay_args.end(), flags.begin(), flags.end());
  relay_args.insert(relay_args.end(), {"--namespace", ns, "--buckets", std::to_string(kBuckets), "--instance", "r1",
                                       "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200",
                                       "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "1000"});
  auto relay = std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, relay_args,
                                              std::vector<std::pair<std::string, std::string>>{},
                                              dir + "/relay-" + ns + ".log");

  // One id per bucket.
  std::vector<std::string> ids;
  std::set<int> used;
  for (int i = 0; static_cast<int>(ids.size()) < kBuckets; ++i) {
    const std::string id = "api-" + std::to_string(i);
    if (used.insert(bucket_of(id, kBuckets)).second) ids.push_back(id);
  }

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

  // Read the bucket streams on the master the sentinels name.
  auto master = connect_redis("127.0.0.1", group.master_port());
  const auto forwarded = [&] {
    long long n = 0;
    for (int b = 0; b < kBuckets; ++b) n += xlen(*master, KeyLayout(ns, b).bucket_stream());
    return n;
  };
  const bool all = wait_until([&] { return forwarded() >= static_cast<long long>(expected.size()); }, 120s, 50ms);
  EXPECT_TRUE(all) << forwarded() << " of " << expected.size() << " forwarded; relay:\n" << relay->output();
  Entries everything;
  for (int b = 0; b < kBuckets; ++b) {
    for (auto& e : xrange_all(*master, KeyLayout(ns, b).bucket_stream())) {
      EXPECT_EQ(bucket_of(e["id"], kBuckets), b) << e["id"] << " in the stream of bucket " << b;
      everything.push_back(std::move(e));
    }
    EXPECT_EQ(integer(*master, {"ZCARD", KeyLayout(ns, b).schedule_key()}), 0) << "bucket " << b;
  }
  expect_exactly_once(everything, expected);
  EXPECT_TRUE(relay->running()) << relay->output();
  EXPECT_TRUE(api.child().running()) << api.child().output();
}

}  // namespace
}  // namespace expiry::test
