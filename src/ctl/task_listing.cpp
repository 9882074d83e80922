// See task_listing.h.
#include "ctl/task_listing.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "redis/redis_values.h"

namespace expiry {
namespace {

constexpr long long kMaxIsoMs = 253402300799999;  // 9999-12-31T23:59:59.999Z

}  // namespace

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
