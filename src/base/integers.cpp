// See integers.h.
#include "base/integers.h"

#include <charconv>

namespace expiry {
namespace {

template <typename T>
std::optional<T> parse_whole(std::string_view text) {
  T value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;  // also overflow
  return value;
}

}  // namespace

std::optional<long long> parse_int64(std::string_view text) { return parse_whole<long long>(text); }

std::optional<unsigned long long> parse_uint64(std::string_view text) {
  return parse_whole<unsigned long long>(text);
}

}  // namespace expiry
