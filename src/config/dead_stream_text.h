// What --check-config shows for dead_stream: the dead-letter stream a program will use, which
// the setting alone does not say (empty means STREAM:dead, and bucket streams ignore it).
// Pure.
#pragma once

#include <string>

namespace expiry {

// `dead_stream`: the resolved setting (STREAM:dead when not set). `buckets`: the buckets
// setting (0: the count stored in Redis, unknown until connected). A single-bucket namespace on
// one Redis uses `dead_stream`; a namespace of several buckets, or any on a Redis Cluster, uses
// each bucket's NS:{B}:dead (functions/bucket_plan.h, uses_bucket_streams). The text names
// both where the setting cannot tell which applies, for example
// "expiry:stream:dead on one Redis with one bucket, else expiry:{B}:dead per bucket".
std::string effective_dead_stream_text(const std::string& ns, const std::string& dead_stream, int buckets);

}  // namespace expiry
