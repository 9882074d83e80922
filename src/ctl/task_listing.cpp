// See task_listing.h.
#include "ctl/task_listing.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "ctl/base64.h"
#include "ctl/redis_values.h"

namespace expiry {
namespace {

constexpr std::string_view kCursorPrefix = "v1:";
constexpr long long kMaxIsoMs = 253402300799999;  // 9999-12-31T23:59:59.999Z

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

bool due_before_is_relative(std::string_view text) { return !text.empty() && text.front() == '+'; }

std::optional<long long> parse_due_before(std::string_view text, long long now_ms) {
  const bool relative = due_before_is_relative(text);
  if (relative) text.remove_prefix(1);
  if (text.empty() || text.front() == '-' || text.front() == '+') return std::nullopt;
  const auto v = to_integer(text);
  if (!v || *v < 0 || *v > kMaxIsoMs) return std::nullopt;
  return relative ? now_ms + *v : *v;
}

std::optional<std::string> iso8601_utc(long long ms) {
  if (ms < 0 || ms > kMaxIsoMs) return std::nullopt;
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  if (!gmtime_r(&seconds, &tm)) return std::nullopt;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return std::string(buf);
}

}  // namespace expiry
