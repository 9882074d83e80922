// See duration_text.h.
#include "base/duration_text.h"

namespace expiry {

std::optional<long long> parse_duration_ms(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits > 18) return std::nullopt;  // 18 digits cannot overflow long long
  long long value = 0;
  for (size_t i = 0; i < digits; ++i) value = value * 10 + (text[i] - '0');
  const std::string_view unit = text.substr(digits);
  long long scale = 0;
  if (unit.empty() || unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60 * 1000;
  } else if (unit == "h") {
    scale = 3600 * 1000;
  } else {
    return std::nullopt;
  }
  if (value == 0 || value > kMaxDurationMs / scale) return std::nullopt;
  return value * scale;
}

}  // namespace expiry
