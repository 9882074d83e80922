// See list_cursor.h.
#include "producer/list_cursor.h"

#include <cmath>
#include <cstdlib>

#include "base/base64.h"

namespace expiry {
namespace {

constexpr std::string_view kCursorPrefix = "v1:";

}  // namespace

std::optional<double> position_score(const TaskPosition& p) {
  if (p.score.empty() || p.score.size() > 64) return std::nullopt;
  const std::string text = p.score;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isnan(v)) return std::nullopt;
  return v;
}

bool position_before(const TaskPosition& a, const TaskPosition& b) {
  const double sa = position_score(a).value_or(0);
  const double sb = position_score(b).value_or(0);
  if (sa != sb) return sa < sb;
  return a.member < b.member;  // std::string compares bytes as unsigned char, like Redis
}

std::string encode_list_cursor(const TaskPosition& last) {
  return base64_encode(std::string(kCursorPrefix) + last.score + ":" + last.member);
}

std::optional<TaskPosition> decode_list_cursor(std::string_view cursor, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<TaskPosition> {
    if (error) *error = why;
    return std::nullopt;
  };
  const auto text = base64_decode(cursor);
  if (!text) return fail("it is not base64");
  if (text->compare(0, kCursorPrefix.size(), kCursorPrefix) != 0) return fail("it has no version prefix");
  const size_t colon = text->find(':', kCursorPrefix.size());
  if (colon == std::string::npos) return fail("it holds no score");
  TaskPosition p{text->substr(kCursorPrefix.size(), colon - kCursorPrefix.size()), text->substr(colon + 1)};
  if (!position_score(p)) return fail("its score is not a number");
  if (p.member.empty()) return fail("it holds no task id");
  return p;
}

}  // namespace expiry
