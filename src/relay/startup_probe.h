// What the relay learns from Redis before its loop starts: whether --redis-url points at a
// Redis Cluster node, and the namespace's bucket count (NS:buckets, written when absent, as
// protocol/bucket_plan.h says). Blocking, bounded by the connect and command timeouts.
#pragma once

#include <optional>
#include <string>

#include "config/relay_config.h"

namespace expiry {

struct StartupFacts {
  bool cluster = false;
  int bucket_count = 1;
};

// nullopt with `unreachable` set when Redis cannot be reached or answer now (the relay then
// starts in single-Redis mode with the configured count, and its connect-time checks refuse a
// cluster or another count). Throws ConfigError when the bucket count conflicts or NS:buckets
// holds garbage.
std::optional<StartupFacts> probe_redis(const RelayConfig& config, std::string* unreachable);

}  // namespace expiry
