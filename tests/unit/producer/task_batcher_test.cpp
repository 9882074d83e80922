// TaskBatcher (src/producer/task_batcher.h) and the expiry_schedule_many argument list and replies
// (src/functions/schedule_batch.h): pure.
#include <gtest/gtest.h>

#include "functions/schedule_batch.h"
#include "producer/task_batcher.h"

namespace expiry {
namespace {

BatchedTask task(size_t index, const std::string& id, size_t payload_bytes = 1) {
  BatchedTask t;
  t.index = index;
  t.task.id = id;
  t.task.payload = std::string(payload_bytes, 'p');
  return t;
}

std::vector<size_t> indices(const TaskBatch& b) {
  std::vector<size_t> out;
  for (const auto& t : b.tasks) out.push_back(t.index);
  return out;
}

TEST(TaskBatcher, ClosesABucketsBatchWhenFullAndTheRestInFirstTaskOrder) {
  TaskBatcher batcher(2, 1000);
  EXPECT_TRUE(batcher.add(3, task(1, "a")).empty());
  EXPECT_TRUE(batcher.add(1, task(2, "b")).empty());
  const auto full = batcher.add(3, task(3, "c"));
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0].bucket, 3);
  EXPECT_EQ(indices(full[0]), (std::vector<size_t>{1, 3}));
  EXPECT_TRUE(batcher.add(0, task(4, "d")).empty());
  const auto rest = batcher.close_all();
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].bucket, 1);
  EXPECT_EQ(rest[1].bucket, 0);
  EXPECT_TRUE(batcher.empty());
}

TEST(TaskBatcher, ClosesABatchBeforeItsPayloadsPassTheLimit) {
  TaskBatcher batcher(100, 10);
  EXPECT_TRUE(batcher.add(0, task(1, "a", 6)).empty());
  const auto closed = batcher.add(0, task(2, "b", 6));
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(indices(closed[0]), (std::vector<size_t>{1}));
  EXPECT_EQ(closed[0].payload_bytes, 6u);
  const auto rest = batcher.close_all();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(indices(rest[0]), (std::vector<size_t>{2}));
}

TEST(ScheduleBatch, ArgvDeclaresEveryKeyAndFiveArgumentsATask) {
  const KeyLayout keys("ns", 7);
  EXPECT_EQ(schedule_many_argv(keys, {{"a", ScheduleMode::Delay, 5, "pa", {}}, {"b", ScheduleMode::At, 9, "pb", "s"}}),
            (std::vector<std::string>{"FCALL", "expiry_schedule_many", "5", "ns:{7}:schedule", "ns:{7}:t:a",
                                      "ns:{7}:task:a", "ns:{7}:t:b", "ns:{7}:task:b", "2", "a", "delay", "5", "pa",
                                      "", "b", "at", "9", "pb", "s"}));
  EXPECT_EQ(schedule_many_argv(keys, {}),
            (std::vector<std::string>{"FCALL", "expiry_schedule_many", "1", "ns:{7}:schedule", "0"}));
}

TEST(ScheduleBatch, ArgvEndsWithTheDatabaseWhenGiven) {
  const KeyLayout keys("ns", 7);
  EXPECT_EQ(schedule_many_argv(keys, {{"a", ScheduleMode::Delay, 5, "pa", {}}}, 4),
            (std::vector<std::string>{"FCALL", "expiry_schedule_many", "3", "ns:{7}:schedule", "ns:{7}:t:a",
                                      "ns:{7}:task:a", "1", "a", "delay", "5", "pa", "", "4"}));
  EXPECT_EQ(schedule_many_argv(keys, {}, 0),
            (std::vector<std::string>{"FCALL", "expiry_schedule_many", "1", "ns:{7}:schedule", "0", "0"}));
}

TEST(ScheduleBatch, DecodesRepliesAndTheTaskAnErrorNames) {
  Reply ok;
  ok.type = Reply::Type::Array;
  for (long long v : {100, 0, 200, 1}) {
    Reply i;
    i.type = Reply::Type::Integer;
    i.integer = v;
    ok.elements.push_back(i);
  }
  const auto r = decode_schedule_many(ok, 2);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)[0].due_ms, 100);
  EXPECT_FALSE((*r)[0].replaced);
  EXPECT_EQ((*r)[1].due_ms, 200);
  EXPECT_TRUE((*r)[1].replaced);
  EXPECT_FALSE(decode_schedule_many(ok, 3).has_value());

  Reply err;
  err.type = Reply::Type::Error;
  err.str = "ERR expiry: task #12 (id x): payload larger than 65536 bytes; nothing was written";
  EXPECT_EQ(schedule_many_failed_task(err), 11u);
  err.str = "ERR expiry: migrating: task #1 (id y): the slot of s is moving";
  EXPECT_EQ(schedule_many_failed_task(err), 0u);
  err.str = "NOPERM this user has no permissions to run the 'fcall|expiry_schedule_many' command";
  EXPECT_FALSE(schedule_many_failed_task(err).has_value());
  EXPECT_FALSE(decode_schedule_many(err, 0).has_value());
}

}  // namespace
}  // namespace expiry
