// Where a Producer works: the Redis endpoint (one Redis, a cluster node to start from, or the
// sentinels), the namespace, its configured bucket count and the relay's default stream; and
// its resolution from the settings the programs share. Pure but for reading password files.
#pragma once

#include <map>
#include <string>

#include "config/redis_url.h"

namespace expiry {

struct ProducerTarget {
  RedisEndpoint redis;
  std::string ns = "expiry";
  int buckets = 0;     // the `buckets` setting: 0 takes NS:buckets (functions/bucket_plan.h)
  std::string stream;  // the relay's default stream on a single-bucket Redis (empty: NS:stream)
};

// `settings` by the names of connection_option_specs() and stream_option_specs()
// (config/service_options.h), resolved as flags over the defaults: a bad value throws
// ConfigError naming its flag, an unknown name "unknown option --<name>".
ProducerTarget resolve_producer_target(const std::map<std::string, std::string>& settings);

}  // namespace expiry
