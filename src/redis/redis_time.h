// The reply of Redis's TIME command: [seconds, microseconds], both as decimal strings. Pure.
#pragma once

#include <optional>

#include "redis/reply.h"

namespace expiry {

// Microseconds since the epoch on the Redis clock; nullopt unless `reply` is a well-formed
// TIME reply (two integer strings, microseconds below 1,000,000, no overflow).
std::optional<long long> time_reply_us(const Reply& reply);
// The same in milliseconds (rounded down).
std::optional<long long> time_reply_ms(const Reply& reply);

}  // namespace expiry
