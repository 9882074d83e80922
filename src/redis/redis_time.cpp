// See redis_time.h.
#include "redis/redis_time.h"

#include <limits>

#include "base/integers.h"

namespace expiry {

std::optional<long long> time_reply_us(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 2) return std::nullopt;
  const auto seconds = parse_int64(reply.elements[0].str);
  const auto micros = parse_int64(reply.elements[1].str);
  if (!seconds || !micros || *seconds < 0 || *micros < 0 || *micros >= 1000000) return std::nullopt;
  if (*seconds > (std::numeric_limits<long long>::max() - *micros) / 1000000) return std::nullopt;
  return *seconds * 1000000 + *micros;
}

std::optional<long long> time_reply_ms(const Reply& reply) {
  const auto us = time_reply_us(reply);
  if (!us) return std::nullopt;
  return *us / 1000;
}

}  // namespace expiry
