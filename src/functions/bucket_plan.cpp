// See bucket_plan.h.
#include "functions/bucket_plan.h"

#include "base/integers.h"
#include "redis/hash_slot.h"

namespace expiry {

std::optional<BucketPlan> plan_buckets(const std::optional<std::string>& stored, int configured, bool cluster,
                                       const std::string& ns, std::string* error) {
  auto refuse = [&](const std::string& why) -> std::optional<BucketPlan> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (configured != 0) {
    if (auto bad = bucket_count_error(configured)) return refuse("buckets: " + *bad);
  }
  if (stored) {
    auto value = parse_int64(*stored);
    if (!value || bucket_count_error(*value)) {
      return refuse("key " + ns + ":buckets holds '" + *stored +
                    "', not a bucket count (a power of two from 1 to 16384); it was not written by this project");
    }
    if (configured != 0 && configured != *value) {
      return refuse("namespace " + ns + " has " + std::to_string(*value) + " buckets (key " + ns +
                    ":buckets) but this program is configured with buckets=" + std::to_string(configured) +
                    "; use the namespace's count (or leave buckets unset), since a task's bucket is CRC16(id) mod the "
                    "count and a different count would look for tasks in the wrong buckets");
    }
    return BucketPlan{static_cast<int>(*value), false};
  }
  const int buckets = configured != 0 ? configured : (cluster ? kDefaultClusterBuckets : 1);
  return BucketPlan{buckets, cluster || buckets > 1};
}

}  // namespace expiry
