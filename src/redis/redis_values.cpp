// Reply decoding helpers; see redis_values.h.
#include "redis/redis_values.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "base/integers.h"

namespace expiry {
namespace {

constexpr size_t kMaxIntegerChars = 20;  // "-9223372036854775808"; longer texts have leading zeros

}  // namespace

std::optional<long long> to_integer(std::string_view s) {
  if (s.size() > kMaxIntegerChars) return std::nullopt;
  return parse_int64(s);
}

std::optional<long long> score_to_ms(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  const std::string text(s);
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(d) ||
      std::fabs(d) > static_cast<double>(std::numeric_limits<long long>::max() / 2)) {
    return std::nullopt;
  }
  return std::llround(d);
}

std::vector<std::pair<std::string, std::string>> field_pairs(const Reply& reply) {
  std::vector<std::pair<std::string, std::string>> out;
  if (reply.type != Reply::Type::Array) return out;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    const Reply& k = reply.elements[i];
    const Reply& v = reply.elements[i + 1];
    const bool v_text = v.type == Reply::Type::String || v.type == Reply::Type::Status;
    out.emplace_back(k.type == Reply::Type::String || k.type == Reply::Type::Status ? k.str : k.describe(),
                     v_text ? v.str : v.describe());
  }
  return out;
}

std::optional<std::string> field_value(const Reply& reply, std::string_view field) {
  for (auto& [k, v] : field_pairs(reply)) {
    if (k == field) return v;
  }
  return std::nullopt;
}

}  // namespace expiry
