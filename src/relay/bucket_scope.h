// Which buckets of a namespace one Relay serves, and where their tasks go.
#pragma once

#include <string>
#include <vector>

#include "functions/bucket_plan.h"
#include "functions/key_layout.h"

namespace expiry {

struct BucketScope {
  int bucket_count = 1;       // B: the namespace's buckets (NS:buckets; 1 when absent)
  bool cluster = false;       // Redis Cluster: one Relay per primary, each with its buckets
  std::vector<int> buckets{0};  // the buckets this Relay sweeps: all of 0..B-1 on one Redis

  // Every bucket of a namespace of `count` buckets on one Redis.
  static BucketScope all(int count) {
    BucketScope scope;
    scope.bucket_count = count;
    scope.buckets.clear();
    for (int b = 0; b < count; ++b) scope.buckets.push_back(b);
    return scope;
  }
  // The stream bucket `keys` forwards into: its own, or `configured` (one bucket on one Redis).
  std::string stream_of(const KeyLayout& keys, const std::string& configured) const {
    return uses_bucket_streams(bucket_count, cluster) ? keys.bucket_stream() : configured;
  }
};

}  // namespace expiry
