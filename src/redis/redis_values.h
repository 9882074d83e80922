// Decoding of the plain Redis replies the tools and the producer read (TIME, scores, field
// lists). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "redis/redis_time.h"  // time_reply_ms, for the callers
#include "redis/reply.h"

namespace expiry {

// A decimal integer (optional '-') of at most 20 characters that fits in long long, or nullopt
// (parse_int64 with a length cap).
std::optional<long long> to_integer(std::string_view s);
// A sorted-set score ("1700000000123", "1.7e12") rounded to whole ms, or nullopt.
std::optional<long long> score_to_ms(std::string_view s);
// The field/value pairs of a flat array reply (HGETALL, stream entry, XINFO), in order;
// non-string elements are rendered with describe().
std::vector<std::pair<std::string, std::string>> field_pairs(const Reply& reply);
// The value of `field` in field_pairs(reply), or nullopt.
std::optional<std::string> field_value(const Reply& reply, std::string_view field);

}  // namespace expiry
