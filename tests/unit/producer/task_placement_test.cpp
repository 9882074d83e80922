// TaskPlacement (src/producer/task_placement.h): which bucket and slot hold a task, the streams a
// namespace forwards to, and the schedule call of a task. Pure.
#include "producer/task_placement.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "redis/hash_slot.h"

namespace expiry {
namespace {

using namespace std::string_literals;

TaskPlacement placement(bool cluster, int buckets) {
  TaskPlacement p;
  p.ns = "ns";
  p.cluster = cluster;
  p.buckets = buckets;
  p.stream = "ns:stream";
  return p;
}

TEST(TaskPlacement, ASingleBucketRedisKeepsTheConfiguredStreamAndBucketZero) {
  const TaskPlacement p = placement(false, 1);
  EXPECT_FALSE(p.bucket_streams());
  EXPECT_EQ(p.bucket_of_task("anything"), 0);
  EXPECT_EQ(p.keys_of_task("job-1").schedule_key(), "ns:{0}:schedule");
  EXPECT_EQ(p.default_stream_of_bucket(0), "ns:stream");
  EXPECT_EQ(p.streams(), std::vector<std::string>{"ns:stream"});
}

TEST(TaskPlacement, SeveralBucketsOnOneRedisUseTheBucketStreams) {
  const TaskPlacement p = placement(false, 4);
  EXPECT_TRUE(p.bucket_streams());
  EXPECT_EQ(p.streams(), (std::vector<std::string>{"ns:{0}:stream", "ns:{1}:stream", "ns:{2}:stream", "ns:{3}:stream"}));
  EXPECT_EQ(p.default_stream_of_bucket(3), "ns:{3}:stream");
  EXPECT_EQ(p.paused_key_of_bucket(3), "ns:{3}:paused");
}

TEST(TaskPlacement, ATaskGoesToBucketCrc16OfItsIdModTheCountAndItsTagsSlot) {
  const TaskPlacement p = placement(true, 64);
  EXPECT_TRUE(p.bucket_streams());
  // crc16("123456789") == 0x31C3 (12739); 12739 mod 64 == 3.
  EXPECT_EQ(p.bucket_of_task("123456789"), 3);
  EXPECT_EQ(p.keys_of_task("123456789").trigger_key("123456789"), "ns:{3}:t:123456789");
  EXPECT_EQ(TaskPlacement::slot_of_bucket(3), key_hash_slot("ns:{3}:schedule"));
  EXPECT_EQ(p.slot_of_task("123456789"), key_hash_slot("ns:{3}:t:123456789"));
  EXPECT_EQ(p.streams().size(), 64u);
  EXPECT_EQ(p.streams()[63], "ns:{63}:stream");
}

TEST(TaskPlacement, TheCountAloneGivesTheSameBucket) {
  EXPECT_EQ(bucket_of_task("123456789", 64), 3);
  EXPECT_EQ(bucket_of_task("123456789", 1), 0);
  for (const char* id : {"a", "order:sim-1-7", "\xc3\xa9t\xc3\xa9"}) {
    EXPECT_EQ(bucket_of_task(id, 16), placement(false, 16).bucket_of_task(id)) << id;
    EXPECT_EQ(bucket_of_task(id, 16), bucket_of(id, 16)) << id;
  }
}

TEST(TaskPlacement, AClusterOfOneBucketStillUsesItsBucketStream) {
  const TaskPlacement p = placement(true, 1);
  EXPECT_TRUE(p.bucket_streams());
  EXPECT_EQ(p.streams(), std::vector<std::string>{"ns:{0}:stream"});
}

TEST(TaskPlacement, TheScheduleCallGoesToTheTasksBucketAndNamesTheDatabase) {
  TaskPlacement p = placement(false, 1);
  p.db = 2;
  Task t;
  t.id = "job";
  t.mode = ScheduleMode::At;
  t.ms = 42;
  t.payload = "p\0q"s;
  t.stream = "s";
  const std::vector<std::string> want = {"FCALL", "expiry_v2_schedule", "3", "ns:{0}:schedule", "ns:{0}:t:job",
                                         "ns:{0}:task:job", "job", "at", "42", "p\0q"s, "s", "2"};
  EXPECT_EQ(p.schedule_argv(t), want);

  p = placement(true, 64);
  t.id = "123456789";
  t.stream.clear();
  t.options.if_absent = true;
  const std::vector<std::string> with_options = {
      "FCALL", "expiry_v2_schedule", "3", "ns:{3}:schedule", "ns:{3}:t:123456789", "ns:{3}:task:123456789",
      "123456789", "at", "42", "p\0q"s, "", "0", "if_absent"};
  EXPECT_EQ(p.schedule_argv(t), with_options);
}

}  // namespace
}  // namespace expiry
