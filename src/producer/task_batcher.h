// How Producer::schedule_stream groups tasks into expiry_schedule_many calls: one open batch per
// bucket, closed when it holds max_tasks tasks or one more payload would pass max_payload_bytes.
// Pure.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "functions/schedule_batch.h"
#include "producer/task.h"

namespace expiry {

struct BatchedTask {
  size_t index = 0;  // its number in the order the tasks were added (ScheduleFeed's numbering)
  Task task;
};

struct TaskBatch {
  int bucket = 0;
  std::vector<BatchedTask> tasks;  // in the order they were added (a later one of an id wins)
  size_t payload_bytes = 0;

  // FCALL expiry_schedule_many of the tasks, in namespace `ns`, from a client of database `db`.
  std::vector<std::string> argv(const std::string& ns, int db) const;
};

class TaskBatcher {
 public:
  // max_tasks at least 1 and at most kMaxScheduleBatchTasks; max_payload_bytes at most
  // kMaxScheduleBatchPayloadBytes (a single larger payload still makes a batch of its own).
  TaskBatcher(size_t max_tasks, size_t max_payload_bytes);

  // Adds `batched` to `bucket`'s open batch; returns the batches this closed (none, or one).
  std::vector<TaskBatch> add(int bucket, BatchedTask batched);
  // Closes every open batch and returns them, ordered by their first task's index.
  std::vector<TaskBatch> close_all();
  bool empty() const { return open_.empty(); }

 private:
  size_t max_tasks_;
  size_t max_payload_bytes_;
  std::map<int, TaskBatch> open_;  // bucket -> its open batch (never empty)
};

}  // namespace expiry
