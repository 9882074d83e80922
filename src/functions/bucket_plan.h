// How many buckets a namespace has, agreed between Redis (the key NS:buckets) and a program's
// `buckets` setting, and which streams its buckets use. Pure; every program calls it at start.
#pragma once

#include <optional>
#include <string>

namespace expiry {

struct BucketPlan {
  int buckets = 1;
  // NS:buckets is absent and must be written (SET NS:buckets B NX, then read back): a
  // namespace with more than one bucket, or any namespace on a cluster, records its count.
  // A single-bucket namespace on one Redis needs no key (every namespace before buckets).
  bool store = false;
};

// `stored`: the value of NS:buckets (nullopt: absent). `configured`: the program's setting (0:
// not set; take what Redis has, else 64 on a cluster and 1 on a single Redis). Returns the
// plan, or sets `error` to a message for the user (a stored value that is not a bucket count,
// or one that differs from the configured count) and returns nullopt.
std::optional<BucketPlan> plan_buckets(const std::optional<std::string>& stored, int configured, bool cluster,
                                       const std::string& ns, std::string* error);

// True when the namespace's tasks are forwarded to each bucket's own streams NS:{B}:stream and
// NS:{B}:dead (more than one bucket, or a cluster, where a stream must share its tasks' slot);
// false for a single bucket on one Redis, which uses the configured stream (default NS:stream).
inline bool uses_bucket_streams(int buckets, bool cluster) { return cluster || buckets > 1; }

}  // namespace expiry
