// The one integer parser: a whole decimal text, an optional leading '-', no sign '+', no
// spaces, no overflow. Every integer read from Redis replies, configuration and /proc goes
// through it; callers decide what a rejected text means. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace expiry {

std::optional<long long> parse_int64(std::string_view text);
std::optional<unsigned long long> parse_uint64(std::string_view text);

}  // namespace expiry
