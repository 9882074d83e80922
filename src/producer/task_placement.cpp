// See task_placement.h.
#include "producer/task_placement.h"

#include "functions/bucket_plan.h"
#include "functions/function_library.h"
#include "redis/hash_slot.h"

namespace expiry {

int bucket_of_task(std::string_view id, int buckets) { return buckets <= 1 ? 0 : bucket_of(id, buckets); }

bool TaskPlacement::bucket_streams() const { return uses_bucket_streams(buckets, cluster); }

int TaskPlacement::bucket_of_task(std::string_view id) const { return expiry::bucket_of_task(id, buckets); }

int TaskPlacement::slot_of_bucket(int b) { return bucket_slot(b); }

std::string TaskPlacement::default_stream_of_bucket(int b) const {
  return bucket_streams() ? KeyLayout(ns, b).bucket_stream() : stream;
}

std::vector<std::string> TaskPlacement::streams() const {
  if (!bucket_streams()) return {stream};
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(buckets));
  for (int b = 0; b < buckets; ++b) out.push_back(KeyLayout(ns, b).bucket_stream());
  return out;
}

std::vector<std::string> TaskPlacement::schedule_argv(const Task& task) const {
  return expiry::schedule_argv(keys_of_task(task.id), task.id, task.mode, task.ms, task.payload, task.stream, db,
                               task_options_argument(task.options));
}

}  // namespace expiry
