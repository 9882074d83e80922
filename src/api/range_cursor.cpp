// See range_cursor.h.
#include "api/range_cursor.h"

#include "base/integers.h"

namespace expiry {
namespace {

constexpr int kMaxBucketDigits = 5;
constexpr size_t kMaxStepBytes = 64;

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A score as Redis writes it: digits, with a sign, a point or an exponent.
bool is_score(std::string_view s) {
  if (s.empty()) return false;
  bool digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E') {
      return false;
    }
  }
  return digit;
}

}  // namespace

std::string range_cursor_text(const RangeCursor& cursor) { return std::to_string(cursor.bucket) + "/" + cursor.step; }

std::optional<RangeCursor> parse_range_cursor(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view bucket = text.substr(0, slash);
  const std::string_view step = text.substr(slash + 1);
  if (!is_digits(bucket) || bucket.size() > kMaxBucketDigits || step.size() > kMaxStepBytes) return std::nullopt;
  if (!step.empty()) {
    const size_t colon = step.rfind(':');
    if (colon == std::string_view::npos || !is_score(step.substr(0, colon)) || !is_digits(step.substr(colon + 1)) ||
        step.size() - colon - 1 > 18) {
      return std::nullopt;
    }
  }
  const auto n = parse_int64(bucket);
  if (!n) return std::nullopt;
  return RangeCursor{static_cast<int>(*n), std::string(step)};
}

}  // namespace expiry
