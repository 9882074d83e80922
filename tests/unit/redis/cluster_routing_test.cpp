// cluster_verdict and group_by_node: the cluster client's routing decisions.
#include "redis/cluster_routing.h"

#include <gtest/gtest.h>

#include "redis/hash_slot.h"  // kClusterSlots

namespace expiry {
namespace {

using Type = Reply::Type;

Reply error(const std::string& text) { return Reply::of(Type::Error, text); }

Reply node(const std::string& host, long long port) {
  return Reply::of_array({Reply::of(Type::String, host), Reply::of_integer(port)});
}

SlotMap three_primaries_with_a_hole() {
  // 0..5460 -> :7000, 5461..10922 -> :7001, 10923..16000 -> :7002, 16001..16383 unassigned.
  Reply slots = Reply::of_array({
      Reply::of_array({Reply::of_integer(0), Reply::of_integer(5460), node("127.0.0.1", 7000)}),
      Reply::of_array({Reply::of_integer(5461), Reply::of_integer(10922), node("127.0.0.1", 7001)}),
      Reply::of_array({Reply::of_integer(10923), Reply::of_integer(16000), node("127.0.0.1", 7002)}),
  });
  std::string err;
  auto map = SlotMap::from_cluster_slots(slots, "127.0.0.1", &err);
  EXPECT_TRUE(map) << err;
  return *map;
}

TEST(ClusterVerdict, SuccessAndOrdinaryErrorsAreDone) {
  EXPECT_EQ(cluster_verdict(Reply::of(Type::Status, "OK")).step, ClusterStep::Done);
  EXPECT_EQ(cluster_verdict(Reply::of_integer(3)).step, ClusterStep::Done);
  EXPECT_EQ(cluster_verdict(Reply{}).step, ClusterStep::Done);
  EXPECT_EQ(cluster_verdict(error("WRONGTYPE Operation against a key holding the wrong kind of value")).step,
            ClusterStep::Done);
  EXPECT_EQ(cluster_verdict(error("CROSSSLOT Keys in request don't hash to the same slot")).step,
            ClusterStep::Done);
  EXPECT_EQ(cluster_verdict(error("ERR unknown command 'FOO'")).step, ClusterStep::Done);
  EXPECT_EQ(cluster_verdict(error("OOM command not allowed when used memory > 'maxmemory'.")).step,
            ClusterStep::Done);
}

TEST(ClusterVerdict, MovedAndAskCarryTheirTarget) {
  const auto moved = cluster_verdict(error("MOVED 3999 127.0.0.1:6381"));
  ASSERT_EQ(moved.step, ClusterStep::FollowMoved);
  ASSERT_TRUE(moved.redirect);
  EXPECT_EQ(moved.redirect->slot, 3999);
  EXPECT_EQ(moved.redirect->to, (NodeAddress{"127.0.0.1", 6381}));

  const auto ask = cluster_verdict(error("ASK 12 10.0.0.2:7000"));
  ASSERT_EQ(ask.step, ClusterStep::FollowAsk);
  ASSERT_TRUE(ask.redirect);
  EXPECT_EQ(ask.redirect->slot, 12);
  EXPECT_EQ(ask.redirect->to, (NodeAddress{"10.0.0.2", 7000}));
}

TEST(ClusterVerdict, MalformedRedirectIsReturnedAsItIs) {
  const auto v = cluster_verdict(error("MOVED 99999 127.0.0.1:6381"));
  EXPECT_EQ(v.step, ClusterStep::Done);
  EXPECT_FALSE(v.redirect);
  EXPECT_EQ(cluster_verdict(error("ASK 12 nowhere")).step, ClusterStep::Done);
}

TEST(ClusterVerdict, PassingStatesAreRetried) {
  EXPECT_EQ(cluster_verdict(error("TRYAGAIN Multiple keys request during rehashing of slot")).step,
            ClusterStep::Retry);
  EXPECT_EQ(cluster_verdict(error("LOADING Redis is loading the dataset in memory")).step, ClusterStep::Retry);
  EXPECT_EQ(cluster_verdict(error("BUSY Redis is busy running a script.")).step, ClusterStep::Retry);
  EXPECT_EQ(cluster_verdict(error("CLUSTERDOWN The cluster is down")).step, ClusterStep::RefreshAndRetry);
  EXPECT_EQ(cluster_verdict(error("CLUSTERDOWN Hash slot not served")).step, ClusterStep::RefreshAndRetry);
  EXPECT_EQ(cluster_verdict(error("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."))
                .step,
            ClusterStep::RefreshAndRetry);
  EXPECT_EQ(cluster_verdict(error("READONLY You can't write against a read only replica.")).step,
            ClusterStep::RefreshAndRetry);
  EXPECT_EQ(cluster_verdict(Reply::io_error("connection reset")).step, ClusterStep::RefreshAndRetry);
}

TEST(GroupByNode, SplitsByOwnerKeepingInputOrder) {
  const SlotMap map = three_primaries_with_a_hole();
  const std::vector<int> slots{100, 5460, 5461, 16000, 0, 16001, -1, kClusterSlots, 10922};
  const NodeGroups g = group_by_node(slots, map);
  ASSERT_EQ(g.by_node.size(), 3u);
  EXPECT_EQ(g.by_node.at(NodeAddress{"127.0.0.1", 7000}), (std::vector<size_t>{0, 1, 4}));
  EXPECT_EQ(g.by_node.at(NodeAddress{"127.0.0.1", 7001}), (std::vector<size_t>{2, 8}));
  EXPECT_EQ(g.by_node.at(NodeAddress{"127.0.0.1", 7002}), (std::vector<size_t>{3}));
  EXPECT_EQ(g.unrouted, (std::vector<size_t>{5, 6, 7}));
}

TEST(GroupByNode, EmptyMapRoutesNothing) {
  const NodeGroups g = group_by_node({1, 2, 3}, SlotMap{});
  EXPECT_TRUE(g.by_node.empty());
  EXPECT_EQ(g.unrouted, (std::vector<size_t>{0, 1, 2}));
}

}  // namespace
}  // namespace expiry
