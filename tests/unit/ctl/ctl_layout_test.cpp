// CtlLayout (where expiry-ctl sends a task's commands and which streams it reads), the entry-id
// order tail merges bucket streams by, and the --wait-replicas shortfall message.
#include "ctl/ctl_layout.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/hash_slot.h"

namespace expiry {
namespace {

CtlLayout layout(bool cluster, int buckets) {
  CtlLayout l;
  l.ns = "ns";
  l.cluster = cluster;
  l.buckets = buckets;
  l.stream = "ns:stream";
  return l;
}

TEST(CtlLayout, ASingleBucketRedisKeepsTheConfiguredStreamAndBucketZero) {
  const CtlLayout l = layout(false, 1);
  EXPECT_FALSE(l.bucket_streams());
  EXPECT_EQ(l.bucket_of_task("anything"), 0);
  EXPECT_EQ(l.keys_of_task("job-1").schedule_key(), "ns:{0}:schedule");
  EXPECT_EQ(l.default_stream_of_bucket(0), "ns:stream");
  EXPECT_EQ(l.streams(), std::vector<std::string>{"ns:stream"});
}

TEST(CtlLayout, SeveralBucketsOnOneRedisUseTheBucketStreams) {
  const CtlLayout l = layout(false, 4);
  EXPECT_TRUE(l.bucket_streams());
  EXPECT_EQ(l.streams(), (std::vector<std::string>{"ns:{0}:stream", "ns:{1}:stream", "ns:{2}:stream", "ns:{3}:stream"}));
  EXPECT_EQ(l.default_stream_of_bucket(3), "ns:{3}:stream");
}

TEST(CtlLayout, ATaskGoesToBucketCrc16OfItsIdModTheCount) {
  const CtlLayout l = layout(true, 64);
  EXPECT_TRUE(l.bucket_streams());
  // crc16("123456789") == 0x31C3 (12739); 12739 mod 64 == 3.
  EXPECT_EQ(l.bucket_of_task("123456789"), 3);
  EXPECT_EQ(l.keys_of_task("123456789").trigger_key("123456789"), "ns:{3}:t:123456789");
  EXPECT_EQ(CtlLayout::slot_of_bucket(3), key_hash_slot("ns:{3}:schedule"));
  EXPECT_EQ(l.streams().size(), 64u);
  EXPECT_EQ(l.streams()[63], "ns:{63}:stream");
}

TEST(CtlLayout, AClusterOfOneBucketStillUsesItsBucketStream) {
  const CtlLayout l = layout(true, 1);
  EXPECT_TRUE(l.bucket_streams());
  EXPECT_EQ(l.streams(), std::vector<std::string>{"ns:{0}:stream"});
}

TEST(EntryIdBefore, OrdersByTimeThenSequenceNotByText) {
  EXPECT_TRUE(entry_id_before("999-0", "1000-0"));
  EXPECT_FALSE(entry_id_before("1000-0", "999-0"));
  EXPECT_TRUE(entry_id_before("1000-2", "1000-10"));
  EXPECT_FALSE(entry_id_before("1000-1", "1000-1"));
  EXPECT_TRUE(entry_id_before("1000", "1000-1"));
  EXPECT_TRUE(entry_id_before("18446744073709551614-0", "18446744073709551615-0"));
}

TEST(EntryIdBefore, IdsThatDoNotParseComeLastInTextOrder) {
  EXPECT_TRUE(entry_id_before("5-0", "x"));
  EXPECT_FALSE(entry_id_before("x", "5-0"));
  EXPECT_TRUE(entry_id_before("a", "b"));
  EXPECT_FALSE(entry_id_before("99999999999999999999999-0", "1-0"));  // overflows: not an id
}

TEST(EntryIdBefore, SortsAMergedPollIntoTimeOrder) {
  std::vector<std::string> ids = {"1700000000002-0", "1700000000001-1", "1700000000001-0", "1700000000010-0"};
  std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) { return entry_id_before(a, b); });
  EXPECT_EQ(ids, (std::vector<std::string>{"1700000000001-0", "1700000000001-1", "1700000000002-0", "1700000000010-0"}));
}

TEST(ReplicaShortfallMessage, NamesWhatWasAskedWhatAcknowledgedAndTheRisk) {
  const std::string m = replica_shortfall_message(2, 1, 500, true);
  EXPECT_NE(m.find("only 1 of the 2 replicas asked for acknowledged the writes within 500 ms"), std::string::npos)
      << m;
  EXPECT_NE(m.find("fewest on any primary"), std::string::npos) << m;
  EXPECT_NE(m.find("docs/reliability.md"), std::string::npos) << m;
  const std::string single = replica_shortfall_message(1, 0, 1000, false);
  EXPECT_NE(single.find("only 0 of the 1 replica asked for"), std::string::npos) << single;
  EXPECT_EQ(single.find("primary written to"), std::string::npos) << single;
}

}  // namespace
}  // namespace expiry
