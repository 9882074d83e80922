// The Producer (src/producer/producer.h) against a 3 + 3 Redis Cluster, in-process: given only a
// seed URL it schedules into every primary's buckets (each task on the node owning its bucket's
// slot), lists them merged in due order, shows, moves, runs now and cancels them, and walks
// every bucket for bulk cancel and pause. One cluster serves every test; each has its namespace.
#include "producer/producer.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "io/sync/cluster_client.h"
#include "producer/task_placement.h"
#include "redis/hash_slot.h"
#include "shared_cluster_test.h"

namespace expiry::test {
namespace {

RedisCluster*& g_cluster = shared_cluster();

class ProducerCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(g_cluster, nullptr);
    g_cluster->wait_cluster_ok();
    ns_ = std::string("producer") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (ns_.size() > 60) ns_.resize(60);
    producer_ = std::make_unique<Producer>(std::map<std::string, std::string>{
        {"redis_url", g_cluster->seed_url()}, {"namespace", ns_}});
    client_ = std::make_unique<ClusterClient>(parse_redis_url(g_cluster->seed_url()));
  }

  // The node that holds `id`'s schedule entry, asked directly (not routed): "" when none does.
  std::string holder_of(const std::string& id) {
    const std::string key = producer_->placement().keys_of_task(id).schedule_key();
    for (const NodeAddress& node : client_->primaries()) {
      const Reply r = client_->command_on(node, {"ZSCORE", key, id});
      if (r.type == Reply::Type::String) return node.to_string();
    }
    return "";
  }

  std::string ns_;
  std::unique_ptr<Producer> producer_;
  std::unique_ptr<ClusterClient> client_;
};

Task task_at(const std::string& id, long long at_ms) {
  Task t;
  t.id = id;
  t.mode = ScheduleMode::At;
  t.ms = at_ms;
  t.payload = "x";
  return t;
}

TEST_F(ProducerCluster, TasksLandOnTheNodeOfTheirBucketAndListInDueOrder) {
  EXPECT_TRUE(producer_->cluster());
  EXPECT_EQ(producer_->buckets(), kDefaultClusterBuckets);
  const long long base = producer_->now_ms() + 3600000;
  std::vector<Task> tasks;
  for (int i = 0; i < 300; ++i) tasks.push_back(task_at("c" + std::to_string(i), base + (i * 7) % 300));
  const auto results = producer_->schedule_many(tasks);
  ASSERT_EQ(results.size(), 300u);

  std::set<std::string> nodes;
  for (int i = 0; i < 300; i += 17) {
    const std::string id = "c" + std::to_string(i);
    const int slot = producer_->placement().slot_of_task(id);
    const NodeAddress* owner = client_->slot_map().primary_of(slot);
    ASSERT_NE(owner, nullptr);
    EXPECT_EQ(holder_of(id), owner->to_string()) << id;
    nodes.insert(owner->to_string());
  }
  EXPECT_EQ(nodes.size(), 3u);  // every primary holds some

  ListQuery query;
  query.count = 120;
  std::vector<ListedTask> listed;
  while (true) {
    const TaskPage page = producer_->list(query);
    listed.insert(listed.end(), page.tasks.begin(), page.tasks.end());
    if (!page.next_cursor) break;
    query.cursor = *page.next_cursor;
  }
  ASSERT_EQ(listed.size(), 300u);
  for (size_t i = 0; i < listed.size(); ++i) EXPECT_EQ(listed[i].due_ms, base + static_cast<long long>(i));
}

TEST_F(ProducerCluster, EveryOperationReachesTheTasksNode) {
  Task t = task_at("one", producer_->now_ms() + 600000);
  t.payload = "payload";
  const long long due = producer_->schedule(t).due_ms;
  TaskDetails shown = producer_->show("one");
  ASSERT_TRUE(shown.pending);
  EXPECT_EQ(shown.due_ms, due);
  EXPECT_EQ(shown.stream, KeyLayout(ns_, producer_->placement().bucket_of_task("one")).bucket_stream());
  ASSERT_TRUE(producer_->reschedule("one", ScheduleMode::Delay, 900000).has_value());
  EXPECT_TRUE(producer_->run_now("one").pending);
  EXPECT_LE(producer_->show("one").due_ms, producer_->now_ms());
  EXPECT_TRUE(producer_->cancel("one"));
  EXPECT_FALSE(producer_->show("one").pending);
  EXPECT_EQ(holder_of("one"), "");
}

TEST_F(ProducerCluster, RangeCancelAndPauseWalkEveryBucket) {
  std::vector<Task> tasks;
  const long long at = producer_->now_ms() + 600000;
  for (int i = 0; i < 200; ++i) tasks.push_back(task_at("walk:" + std::to_string(i), at));
  producer_->schedule_many(tasks);
  const PauseResult paused = producer_->pause(std::chrono::milliseconds(0));
  EXPECT_EQ(paused.pending, 200);
  EXPECT_EQ(producer_->resume().value, kDefaultClusterBuckets);
  RangeFilter all;
  all.prefix = "walk:";
  int calls = 0;
  const RangeTotals cancelled = producer_->cancel_range(all, [&](const RangeProgress&) { ++calls; });
  EXPECT_EQ(cancelled.acted, 200);
  EXPECT_GE(calls, kDefaultClusterBuckets);
  EXPECT_TRUE(producer_->list(ListQuery{}).tasks.empty());
}

}  // namespace
}  // namespace expiry::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new expiry::test::SharedClusterEnvironment);
  return RUN_ALL_TESTS();
}
