// See task_batcher.h.
#include "producer/task_batcher.h"

#include <algorithm>
#include <utility>

namespace expiry {

std::vector<std::string> TaskBatch::argv(const std::string& ns, int db) const {
  std::vector<std::string> options;  // each task's options argument, viewed by `views`
  options.reserve(tasks.size());
  for (const auto& t : tasks) options.push_back(task_options_argument(t.task.options));
  std::vector<ScheduleBatchTask> views;
  views.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    const Task& r = tasks[i].task;
    views.push_back({r.id, r.mode, r.ms, r.payload, r.stream, options[i]});
  }
  return schedule_many_argv(KeyLayout(ns, bucket), views, db);
}

TaskBatcher::TaskBatcher(size_t max_tasks, size_t max_payload_bytes)
    : max_tasks_(std::clamp<size_t>(max_tasks, 1, kMaxScheduleBatchTasks)),
      max_payload_bytes_(std::min(max_payload_bytes, kMaxScheduleBatchPayloadBytes)) {}

std::vector<TaskBatch> TaskBatcher::add(int bucket, BatchedTask batched) {
  std::vector<TaskBatch> closed;
  auto it = open_.find(bucket);
  const size_t bytes = batched.task.payload.size();
  if (it != open_.end() && it->second.payload_bytes + bytes > max_payload_bytes_) {
    closed.push_back(std::move(it->second));
    open_.erase(it);
    it = open_.end();
  }
  if (it == open_.end()) it = open_.emplace(bucket, TaskBatch{bucket, {}, 0}).first;
  it->second.tasks.push_back(std::move(batched));
  it->second.payload_bytes += bytes;
  if (it->second.tasks.size() >= max_tasks_) {
    closed.push_back(std::move(it->second));
    open_.erase(it);
  }
  return closed;
}

std::vector<TaskBatch> TaskBatcher::close_all() {
  std::vector<TaskBatch> closed;
  closed.reserve(open_.size());
  for (auto& [bucket, batch] : open_) closed.push_back(std::move(batch));
  open_.clear();
  std::sort(closed.begin(), closed.end(),
            [](const TaskBatch& a, const TaskBatch& b) { return a.tasks.front().index < b.tasks.front().index; });
  return closed;
}

}  // namespace expiry
