// See time_text.h.
#include "recur/time_text.h"

#include <date/date.h>

#include <cstdio>
#include <cstdlib>

#include "base/errors.h"
#include "base/integers.h"

namespace expiry {
namespace {

using std::chrono::milliseconds;

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// "YYYY-MM-DDTHH:MM:SS.mmm" of an epoch-like count of milliseconds.
std::string civil_text(std::int64_t ms) {
  const date::sys_time<milliseconds> when{milliseconds{ms}};
  const date::sys_days day = date::floor<date::days>(when);
  const date::year_month_day ymd{day};
  const std::int64_t in_day = (when - day).count();
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d.%03d", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(in_day / 3600000), static_cast<int>(in_day / 60000 % 60),
                static_cast<int>(in_day / 1000 % 60), static_cast<int>(in_day % 1000));
  return text;
}

[[noreturn]] void fail_time(std::string_view text) {
  throw ConfigError("time '" + std::string(text) +
                    "' is neither epoch milliseconds nor an ISO-8601 date-time such as 2026-03-29T03:00:00, "
                    "2026-03-29T01:00:00.000Z or 2026-03-29T03:00:00+02:00");
}

void check_range(std::string_view text, std::int64_t ms) {
  if (ms < kMinIsoTimeMs || ms > kMaxIsoTimeMs) {
    throw ConfigError("time '" + std::string(text) + "' is outside the years 0000-9999");
  }
}

// Reads exactly `count` digits at text[at...] into `value`; false when they are not all digits.
bool read_digits(std::string_view text, size_t& at, size_t count, int& value) {
  if (at + count > text.size()) return false;
  value = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[at + i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  at += count;
  return true;
}

bool read_char(std::string_view text, size_t& at, char expected) {
  if (at < text.size() && text[at] == expected) {
    ++at;
    return true;
  }
  return false;
}

}  // namespace

std::string format_utc_iso(std::int64_t utc_ms) { return civil_text(utc_ms) + "Z"; }

std::string format_local_iso(std::int64_t utc_ms, const TimeZone& zone) {
  const std::int64_t offset_s = zone.offset_at(floor_div(utc_ms, 1000)).count();
  const std::int64_t magnitude = std::llabs(offset_s);
  char offset[16];
  std::snprintf(offset, sizeof offset, "%c%02d:%02d", offset_s < 0 ? '-' : '+', static_cast<int>(magnitude / 3600),
                static_cast<int>(magnitude / 60 % 60));
  return civil_text(utc_ms + offset_s * 1000) + offset;
}

std::int64_t parse_time_arg(std::string_view text, const TimeZone& zone) {
  if (!text.empty() && text.find_first_not_of("-0123456789") == std::string_view::npos) {
    const std::optional<long long> ms = parse_int64(text);
    if (!ms) fail_time(text);
    check_range(text, *ms);
    return *ms;
  }
  size_t at = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, millis = 0;
  if (!read_digits(text, at, 4, year) || !read_char(text, at, '-') || !read_digits(text, at, 2, month) ||
      !read_char(text, at, '-') || !read_digits(text, at, 2, day)) {
    fail_time(text);
  }
  if (!read_char(text, at, 'T') && !read_char(text, at, 't') && !read_char(text, at, ' ')) fail_time(text);
  if (!read_digits(text, at, 2, hour) || !read_char(text, at, ':') || !read_digits(text, at, 2, minute)) {
    fail_time(text);
  }
  if (read_char(text, at, ':')) {
    if (!read_digits(text, at, 2, second)) fail_time(text);
    if (read_char(text, at, '.')) {
      int digits = 0;
      while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
        if (++digits > 3) fail_time(text);
        millis = millis * 10 + (text[at++] - '0');
      }
      if (digits == 0) fail_time(text);
      for (int i = digits; i < 3; ++i) millis *= 10;
    }
  }
  const date::year_month_day ymd{date::year{year}, date::month{static_cast<unsigned>(month)},
                                 date::day{static_cast<unsigned>(day)}};
  if (!ymd.ok() || hour > 23 || minute > 59 || second > 59) {
    throw ConfigError("time '" + std::string(text) + "' is not a valid date and time of day");
  }
  const std::int64_t civil_s =
      date::sys_days{ymd}.time_since_epoch().count() * 86400LL + hour * 3600LL + minute * 60LL + second;
  if (at == text.size()) {  // local time in the zone
    const LocalMapping mapping = zone.map_local(LocalSeconds{civil_s});
    if (mapping.kind == LocalMapping::Kind::Nonexistent) {
      throw ConfigError("local time '" + std::string(text) + "' does not exist in " + zone.name() +
                        " (a daylight-saving change skips it)");
    }
    const std::int64_t ms = mapping.earliest_s * 1000 + millis;
    check_range(text, ms);
    return ms;
  }
  std::int64_t offset_s = 0;
  if (read_char(text, at, 'Z') || read_char(text, at, 'z')) {
    offset_s = 0;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    const int sign = text[at++] == '-' ? -1 : 1;
    int offset_hours = 0, offset_minutes = 0;
    if (!read_digits(text, at, 2, offset_hours)) fail_time(text);
    if (at < text.size()) {
      read_char(text, at, ':');
      if (!read_digits(text, at, 2, offset_minutes)) fail_time(text);
    }
    if (offset_hours > 23 || offset_minutes > 59) fail_time(text);
    offset_s = sign * (offset_hours * 3600LL + offset_minutes * 60LL);
  } else {
    fail_time(text);
  }
  if (at != text.size()) fail_time(text);
  const std::int64_t ms = (civil_s - offset_s) * 1000 + millis;
  check_range(text, ms);
  return ms;
}

}  // namespace expiry
