// expiry-ctl against a 3 + 3 Redis Cluster (every command, tasks in every primary's buckets,
// list and dead letters merged across the nodes, bulk files pipelined per node, --wait-replicas,
// a conflicting bucket count), and against a single Redis whose namespace has several buckets. The real binary; outcomes read from Redis.
// One cluster serves every test; each test uses a namespace of its own.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "functions/key_layout.h"
#include "harness/child_process.h"
#include "integration/ctl/ctl_run.h"
#include "io/sync/cluster_client.h"
#include "redis/hash_slot.h"
#include "shared_cluster_test.h"
#include "support/redis_client.h"
#include "support/redis_cluster.h"
#include "support/redis_server.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

constexpr int kBuckets = 64;  // the cluster default

RedisCluster*& g_cluster = shared_cluster();



class CtlCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(g_cluster, nullptr);
    g_cluster->wait_cluster_ok();
    client_ = std::make_unique<ClusterClient>(parse_redis_url(g_cluster->seed_url()));
    ns_ = std::string("ctl") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (ns_.size() > 60) ns_.resize(60);
  }

  // expiry-ctl with the cluster's seed URL (any node would do) and this test's namespace.
  CtlRun ctl(std::vector<std::string> args) {
    args.push_back("--redis-url=" + g_cluster->seed_url());
    args.push_back("--namespace=" + ns_);
    return run_ctl(args);
  }

  std::string write_file(const std::string& name, const std::string& content) {
    const std::string path = g_cluster->dir() + "/" + ns_ + "-" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  Reply on_bucket(int b, const std::vector<std::string>& argv) { return client_->command(argv, bucket_slot(b)); }
  std::string primary_of_bucket(int b) {
    const NodeAddress* p = client_->slot_map().primary_of(bucket_slot(b));
    return p ? p->to_string() : "";
  }

  // Ids "<prefix>0", "<prefix>1", ... until every primary holds the bucket of at least `per_node`.
  std::vector<std::string> ids_on_every_primary(const std::string& prefix, int per_node) {
    std::map<std::string, int> per_primary;
    std::vector<std::string> ids;
    const size_t primaries = client_->primaries().size();
    for (int i = 0; i < 10000; ++i) {
      const std::string id = prefix + std::to_string(i);
      const std::string node = primary_of_bucket(bucket_of(id, kBuckets));
      if (per_primary[node] >= per_node) continue;
      ++per_primary[node];
      ids.push_back(id);
      bool done = per_primary.size() == primaries;
      for (const auto& [n, count] : per_primary) done = done && count >= per_node;
      if (done) break;
    }
    return ids;
  }

  std::optional<long long> score(const std::string& id) {
    const int b = bucket_of(id, kBuckets);
    const Reply r = on_bucket(b, {"ZSCORE", KeyLayout(ns_, b).schedule_key(), id});
    if (r.type != Reply::Type::String) return std::nullopt;
    return std::stoll(r.str);
  }

  long long pending() {
    long long n = 0;
    for (int b = 0; b < kBuckets; ++b) n += on_bucket(b, {"ZCARD", KeyLayout(ns_, b).schedule_key()}).integer;
    return n;
  }

  std::unique_ptr<ClusterClient> client_;
  std::string ns_;
};

TEST_F(CtlCluster, FirstCommandRecordsTheDefaultBucketCount) {
  const CtlRun run = ctl({"stats", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const Reply stored = client_->command({"GET", ns_ + ":buckets"}, key_hash_slot(ns_ + ":buckets"));
  EXPECT_EQ(stored.str, "64");
}

TEST_F(CtlCluster, ScheduleShowRescheduleCancelOnEveryPrimary) {
  const auto ids = ids_on_every_primary("job-", 2);
  ASSERT_EQ(ids.size(), 2 * client_->primaries().size());
  for (const auto& id : ids) {
    const CtlRun run = ctl({"schedule", id, "--delay-ms", "600000", "--payload", "p-" + id});
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(run.output, m, std::regex("scheduled " + id + " due_ms=(\\d+)"))) << run.output;
    ASSERT_TRUE(score(id).has_value()) << id << " is not in bucket " << bucket_of(id, kBuckets);
    EXPECT_EQ(*score(id), std::stoll(m[1].str()));
  }

  for (const auto& id : ids) {
    const CtlRun show = ctl({"show", id, "--json"});
    ASSERT_EQ(show.exit_code, 0) << show.output;
    const auto j = nlohmann::json::parse(show.output);
    EXPECT_EQ(j["payload"], "p-" + id);
    EXPECT_EQ(j["stream"], KeyLayout(ns_, bucket_of(id, kBuckets)).bucket_stream());
    EXPECT_EQ(j["default_stream"], true);
  }

  const CtlRun moved = ctl({"reschedule", ids[0], "--delay-ms", "900000"});
  ASSERT_EQ(moved.exit_code, 0) << moved.output;
  EXPECT_TRUE(contains(moved.output, "rescheduled " + ids[0])) << moved.output;

  for (const auto& id : ids) {
    const CtlRun cancel = ctl({"cancel", id, "--strict"});
    ASSERT_EQ(cancel.exit_code, 0) << cancel.output;
    EXPECT_TRUE(contains(cancel.output, "cancelled " + id)) << cancel.output;
    EXPECT_FALSE(score(id).has_value()) << id;
  }
  EXPECT_EQ(ctl({"cancel", ids[0], "--strict"}).exit_code, 3);
  const CtlRun gone = ctl({"show", ids[1]});
  EXPECT_EQ(gone.exit_code, 3) << gone.output;
  EXPECT_TRUE(contains(gone.output, "not pending: " + ids[1])) << gone.output;
}

TEST_F(CtlCluster, ListPagesTheTasksOfEveryPrimaryInDueOrder) {
  const auto ids = ids_on_every_primary("list-", 2);
  ASSERT_EQ(ids.size(), 2 * client_->primaries().size());
  // Due in the reverse of the ids' order, a second apart, so due order is not id order.
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string delay = std::to_string(600000 + 1000 * static_cast<long long>(ids.size() - i));
    const CtlRun run = ctl({"schedule", ids[i], "--delay-ms", delay, "--payload", "p-" + ids[i]});
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  const std::vector<std::string> due_order(ids.rbegin(), ids.rend());

  std::vector<std::string> listed;
  std::string cursor;
  for (int page = 0; page < 10; ++page) {
    std::vector<std::string> args{"list", "--json", "--count", "4"};
    if (!cursor.empty()) args.insert(args.end(), {"--cursor", cursor});
    const CtlRun run = ctl(args);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto j = nlohmann::json::parse(run.output);
    for (const auto& t : j["tasks"]) {
      const std::string id = t["id"];
      listed.push_back(id);
      EXPECT_EQ(t["bucket"], bucket_of(id, kBuckets)) << id;
      EXPECT_EQ(t["payload"], "p-" + id);
    }
    if (j["next_cursor"].is_null()) break;
    cursor = j["next_cursor"];
  }
  EXPECT_EQ(listed, due_order);
}

TEST_F(CtlCluster, DeadListAndReplayCoverEveryPrimarysBucketStreams) {
  const auto ids = ids_on_every_primary("dead-", 1);
  ASSERT_EQ(ids.size(), client_->primaries().size());
  for (const auto& id : ids) {
    const KeyLayout keys(ns_, bucket_of(id, kBuckets));
    const Reply added = on_bucket(keys.bucket(), {"XADD", keys.bucket_dead_stream(), "*", "original_id", "1-1",
                                                  "original_stream", keys.bucket_stream(), "group", "workers",
                                                  "reason", "poison", "deliveries", "5", "dead_ms", "1", "id", id,
                                                  "payload", "p-" + id});
    ASSERT_EQ(added.type, Reply::Type::String) << added.describe();
  }

  const CtlRun list = ctl({"dead", "list", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  const auto j = nlohmann::json::parse(list.output);
  std::set<std::string> dead_tasks;
  for (const auto& e : j["entries"]) dead_tasks.insert(e["task_id"].get<std::string>());
  EXPECT_EQ(dead_tasks, std::set<std::string>(ids.begin(), ids.end()));

  const CtlRun replay = ctl({"dead", "replay", "--all", "--delay-ms", "600000"});
  ASSERT_EQ(replay.exit_code, 0) << replay.output;
  for (const auto& id : ids) {
    const KeyLayout keys(ns_, bucket_of(id, kBuckets));
    EXPECT_TRUE(score(id).has_value()) << id << " was not scheduled again";
    EXPECT_EQ(on_bucket(keys.bucket(), {"HGET", keys.shadow_key(id), "payload"}).str, "p-" + id);
    EXPECT_EQ(on_bucket(keys.bucket(), {"XLEN", keys.bucket_dead_stream()}).integer, 0) << id;
  }
  const CtlRun empty = ctl({"dead", "list", "--json"});
  ASSERT_EQ(empty.exit_code, 0) << empty.output;
  EXPECT_EQ(nlohmann::json::parse(empty.output)["count"], 0);
}

TEST_F(CtlCluster, BulkFileLandsInEveryTasksBucket) {
  constexpr int kTasks = 3000;
  std::string lines;
  for (int i = 0; i < kTasks; ++i) lines += "{\"id\":\"bulk-" + std::to_string(i) + "\",\"delay_ms\":600000}\n";
  const CtlRun run = ctl({"schedule", "--file", write_file("bulk.jsonl", lines)});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run.output, "scheduled 3000 tasks (0 replaced)")) << run.output;

  std::vector<ClusterClient::Routed> reads;
  std::set<int> buckets;
  for (int i = 0; i < kTasks; ++i) {
    const std::string id = "bulk-" + std::to_string(i);
    const int b = bucket_of(id, kBuckets);
    buckets.insert(b);
    reads.push_back({bucket_slot(b), {"ZSCORE", KeyLayout(ns_, b).schedule_key(), id}});
  }
  const auto replies = client_->batch(reads);
  int missing = 0;
  for (const auto& r : replies) missing += r.type == Reply::Type::String ? 0 : 1;
  EXPECT_EQ(missing, 0);
  EXPECT_EQ(buckets.size(), static_cast<size_t>(kBuckets));  // 3000 ids cover every bucket
  EXPECT_EQ(pending(), kTasks);  // nothing anywhere else

  const CtlRun stats = ctl({"stats", "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  const auto j = nlohmann::json::parse(stats.output);
  EXPECT_EQ(j["cluster"], true);
  EXPECT_EQ(j["buckets"], kBuckets);
  ASSERT_EQ(j["streams"].size(), static_cast<size_t>(kBuckets));
  EXPECT_EQ(j["streams"][5], KeyLayout(ns_, 5).bucket_stream());
  EXPECT_EQ(j["pending"], kTasks);
  EXPECT_EQ(j["overdue"], 0);
  EXPECT_EQ(j["stream_length"], 0);
}

TEST_F(CtlCluster, StatsSumsOverdueAndStreamLengthsOverEveryNode) {
  const auto ids = ids_on_every_primary("due-", 1);
  for (const auto& id : ids) ASSERT_EQ(ctl({"schedule", id, "--at-ms", "1"}).exit_code, 0);
  // Stream entries in one bucket per primary, with a consumer group on each stream.
  for (const auto& id : ids) {
    const int b = bucket_of(id, kBuckets);
    on_bucket(b, {"XADD", KeyLayout(ns_, b).bucket_stream(), "*", "id", "x-" + id});
    on_bucket(b, {"XADD", KeyLayout(ns_, b).bucket_stream(), "*", "id", "y-" + id});
    ASSERT_FALSE(on_bucket(b, {"XGROUP", "CREATE", KeyLayout(ns_, b).bucket_stream(), "workers", "0"}).failed());
  }
  const CtlRun run = ctl({"stats", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto j = nlohmann::json::parse(run.output);
  EXPECT_EQ(j["pending"], ids.size());
  EXPECT_EQ(j["overdue"], ids.size());
  EXPECT_EQ(j["stream_length"], 2 * ids.size());
  EXPECT_EQ(j["streams_existing"], ids.size());
  EXPECT_EQ(j["group_exists"], true);
  EXPECT_EQ(j["group_lag"], 2 * ids.size());

  const CtlRun text = ctl({"stats"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, "buckets: 64")) << text.output;
  EXPECT_TRUE(contains(text.output, "pending: " + std::to_string(ids.size()))) << text.output;
}

TEST_F(CtlCluster, TailMergesEveryBucketStreamInEntryIdOrder) {
  const auto ids = ids_on_every_primary("tail-", 2);
  std::vector<std::string> added;
  for (const auto& id : ids) {
    const int b = bucket_of(id, kBuckets);
    const Reply r = on_bucket(b, {"XADD", KeyLayout(ns_, b).bucket_stream(), "*", "id", id, "payload", "p"});
    ASSERT_EQ(r.type, Reply::Type::String) << r.describe();
    added.push_back(r.str);
  }
  const CtlRun run = ctl({"tail", "--from", "0", "--count", std::to_string(ids.size()), "--timeout-ms", "20000"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const auto& id : ids) EXPECT_TRUE(contains(run.output, "id=" + id)) << id << "\n" << run.output;
  // Entry ids ascend through the output (one poll brought them all).
  std::vector<std::pair<long long, long long>> printed;
  std::regex line("^(\\d+)-(\\d+) ");
  std::istringstream in(run.output);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) printed.emplace_back(std::stoll(m[1].str()), std::stoll(m[2].str()));
  }
  ASSERT_EQ(printed.size(), ids.size()) << run.output;
  EXPECT_TRUE(std::is_sorted(printed.begin(), printed.end())) << run.output;

  // From "$" only entries added later are printed: with none, the quiet timeout ends it.
  const CtlRun quiet = ctl({"tail", "--count", "1", "--timeout-ms", "300"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_FALSE(contains(quiet.output, "id=")) << quiet.output;
}

TEST_F(CtlCluster, CheckFindsAndRepairsOrphansOnEveryPrimary) {
  const auto ids = ids_on_every_primary("orph-", 1);
  for (const auto& id : ids) ASSERT_EQ(ctl({"schedule", id, "--delay-ms", "600000"}).exit_code, 0);
  ASSERT_EQ(ctl({"schedule", "kept", "--delay-ms", "600000"}).exit_code, 0);
  const CtlRun clean = ctl({"check"});
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_TRUE(contains(clean.output, "no orphans")) << clean.output;

  // Each orphaned task keeps a shadow hash and a trigger key: 2 per primary.
  for (const auto& id : ids) {
    const int b = bucket_of(id, kBuckets);
    on_bucket(b, {"ZREM", KeyLayout(ns_, b).schedule_key(), id});
  }
  const CtlRun found = ctl({"check", "--json"});
  EXPECT_EQ(found.exit_code, 1) << found.output;
  const auto j = nlohmann::json::parse(found.output.substr(0, found.output.find('\n')));
  EXPECT_EQ(j["orphans"], 2 * ids.size());
  EXPECT_EQ(j["orphan_shadow_hashes"], ids.size());

  const CtlRun repair = ctl({"check", "--repair"});
  EXPECT_EQ(repair.exit_code, 0) << repair.output;
  EXPECT_TRUE(contains(repair.output, "deleted " + std::to_string(2 * ids.size()) + " orphaned keys")) << repair.output;
  for (const auto& id : ids) {
    const int b = bucket_of(id, kBuckets);
    EXPECT_EQ(on_bucket(b, {"EXISTS", KeyLayout(ns_, b).shadow_key(id), KeyLayout(ns_, b).trigger_key(id)}).integer, 0);
  }
  EXPECT_TRUE(score("kept").has_value());
  EXPECT_EQ(ctl({"check"}).exit_code, 0);
}

TEST_F(CtlCluster, WaitReplicasOneSucceedsAndTwoFailsWithTheCount) {
  const CtlRun one = ctl({"schedule", "w1", "--delay-ms", "600000", "--wait-replicas", "1"});
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_TRUE(contains(one.output, "1 replica acknowledged the writes")) << one.output;

  std::string lines;
  for (int i = 0; i < 500; ++i) lines += "{\"id\":\"wb-" + std::to_string(i) + "\",\"delay_ms\":600000}\n";
  const std::string file = write_file("wait.jsonl", lines);
  const CtlRun bulk = ctl({"schedule", "--file", file, "--wait-replicas", "1"});
  EXPECT_EQ(bulk.exit_code, 0) << bulk.output;
  EXPECT_TRUE(contains(bulk.output, "scheduled 500 tasks")) << bulk.output;

  // One replica per primary: two can never acknowledge. The tasks are written all the same.
  const CtlRun two = ctl({"schedule", "w2", "--delay-ms", "600000", "--wait-replicas", "2", "--wait-timeout-ms", "300"});
  EXPECT_EQ(two.exit_code, 4) << two.output;
  EXPECT_TRUE(contains(two.output, "only 1 of the 2 replicas asked for acknowledged the writes within 300 ms"))
      << two.output;
  EXPECT_TRUE(score("w2").has_value());
  const CtlRun bulk_two = ctl({"schedule", "--file", file, "--wait-replicas", "2", "--wait-timeout-ms", "300"});
  EXPECT_EQ(bulk_two.exit_code, 4) << bulk_two.output;
  EXPECT_TRUE(contains(bulk_two.output, "only 1 of the 2 replicas")) << bulk_two.output;
}

TEST_F(CtlCluster, AnotherConfiguredBucketCountIsRefusedWithExit2) {
  ASSERT_EQ(ctl({"schedule", "a", "--delay-ms", "600000"}).exit_code, 0);  // records 64
  const CtlRun run = ctl({"schedule", "b", "--delay-ms", "600000", "--buckets", "16"});
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "has 64 buckets")) << run.output;
  EXPECT_TRUE(contains(run.output, "buckets=16")) << run.output;
  EXPECT_FALSE(score("b").has_value());
  EXPECT_EQ(ctl({"stats", "--buckets", "64"}).exit_code, 0);
}

// One Redis whose namespace has 4 buckets: the same routing, on one connection.
TEST(CtlSingleRedisBuckets, TasksGoToTheirBucketsAndStatsAndTailCoverThemAll) {
  RedisServer server;
  TestConnection redis(server.host(), server.port());
  redis.command({"SET", "ns4:buckets", "4"});
  auto ctl = [&](std::vector<std::string> args) {
    args.push_back("--redis-url=" + server.url());
    args.push_back("--namespace=ns4");
    return run_ctl(args);
  };
  std::set<int> buckets;
  for (int i = 0; i < 16; ++i) {
    const std::string id = "s-" + std::to_string(i);
    ASSERT_EQ(ctl({"schedule", id, "--delay-ms", "600000"}).exit_code, 0);
    const int b = bucket_of(id, 4);
    buckets.insert(b);
    EXPECT_EQ(redis.command({"ZSCORE", KeyLayout("ns4", b).schedule_key(), id}).type, Reply::Type::String) << id;
  }
  EXPECT_EQ(buckets.size(), 4u);
  const CtlRun show = ctl({"show", "s-3", "--json"});
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_EQ(nlohmann::json::parse(show.output)["stream"], KeyLayout("ns4", bucket_of("s-3", 4)).bucket_stream());

  const CtlRun stats = ctl({"stats", "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  const auto j = nlohmann::json::parse(stats.output);
  EXPECT_EQ(j["cluster"], false);
  EXPECT_EQ(j["buckets"], 4);
  EXPECT_EQ(j["pending"], 16);
  EXPECT_EQ(j["streams"].size(), 4u);

  redis.command({"XADD", "ns4:{2}:stream", "1000-0", "id", "late"});
  redis.command({"XADD", "ns4:{0}:stream", "2000-0", "id", "later"});
  const CtlRun tail = ctl({"tail", "--from", "0", "--count", "2", "--timeout-ms", "20000"});
  ASSERT_EQ(tail.exit_code, 0) << tail.output;
  EXPECT_LT(tail.output.find("id=late"), tail.output.find("id=later")) << tail.output;

  const CtlRun cancel = ctl({"cancel", "s-3", "--strict"});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.output;
  EXPECT_EQ(ctl({"schedule", "x", "--delay-ms", "1", "--buckets", "8"}).exit_code, 2);
  EXPECT_EQ(ctl({"check"}).exit_code, 0);
}

// pause / resume set and clear every bucket's flag on its owner node, and a prefix cancel
// reaches the tasks of every primary, leaving the others.
TEST_F(CtlCluster, PauseResumeAndPrefixCancelCoverEveryBucketOfEveryPrimary) {
  const auto doomed = ids_on_every_primary("gone-", 3);
  const auto kept = ids_on_every_primary("stay-", 2);
  std::string lines;
  for (const auto& id : doomed) lines += "{\"id\":\"" + id + "\",\"at_ms\":1000}\n";
  for (const auto& id : kept) lines += "{\"id\":\"" + id + "\",\"delay_ms\":600000}\n";
  ASSERT_EQ(ctl({"schedule", "--file", write_file("deadline.jsonl", lines)}).exit_code, 0);

  const CtlRun pause = ctl({"pause", "--for", "10m"});
  ASSERT_EQ(pause.exit_code, 0) << pause.output;
  EXPECT_TRUE(contains(pause.output, "64 buckets, " + std::to_string(doomed.size() + kept.size()) + " pending, " +
                                         std::to_string(doomed.size()) + " overdue"))
      << pause.output;
  for (int b = 0; b < kBuckets; ++b) {
    const Reply ttl = on_bucket(b, {"PTTL", ns_ + ":{" + std::to_string(b) + "}:paused"});
    EXPECT_GT(ttl.integer, 0) << "bucket " << b << " on " << primary_of_bucket(b);
  }
  const CtlRun stats = ctl({"stats", "--json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  const auto j = nlohmann::json::parse(stats.output);
  EXPECT_EQ(j.at("paused"), true);
  EXPECT_EQ(j.at("paused_buckets"), kBuckets);
  EXPECT_EQ(j.at("overdue").get<size_t>(), doomed.size());

  const CtlRun cancel = ctl({"cancel", "--prefix", "gone-"});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.output;
  EXPECT_TRUE(contains(cancel.output, "cancelled " + std::to_string(doomed.size()) + " tasks")) << cancel.output;
  for (const auto& id : doomed) EXPECT_FALSE(score(id).has_value()) << id;
  for (const auto& id : kept) EXPECT_TRUE(score(id).has_value()) << id;
  EXPECT_EQ(pending(), static_cast<long long>(kept.size()));

  const CtlRun resume = ctl({"resume"});
  ASSERT_EQ(resume.exit_code, 0) << resume.output;
  EXPECT_TRUE(contains(resume.output, "resumed: 64 of 64 buckets were paused; 0 overdue")) << resume.output;
  for (int b = 0; b < kBuckets; ++b) {
    EXPECT_EQ(on_bucket(b, {"EXISTS", ns_ + ":{" + std::to_string(b) + "}:paused"}).integer, 0) << b;
  }
}

}  // namespace
}  // namespace expiry::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new expiry::test::SharedClusterEnvironment);
  return RUN_ALL_TESTS();
}
