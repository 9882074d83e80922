// See civil_search.h.
#include "recur/civil_search.h"

#include <date/date.h>

namespace expiry {
namespace {

using std::chrono::seconds;

// The first set bit at or after `from`, or -1.
template <size_t N>
int first_set(const std::bitset<N>& bits, int from) {
  for (int i = from; i < static_cast<int>(N); ++i) {
    if (bits[static_cast<size_t>(i)]) return i;
  }
  return -1;
}

// The first time of day (seconds after midnight) at or after hour:minute:second that matches the
// hour, minute and second fields, or -1.
long first_time_of_day(const CronSchedule& s, int hour, int minute, int second) {
  for (int h = first_set(s.hours, hour); h >= 0; h = first_set(s.hours, h + 1)) {
    const int minute_from = h == hour ? minute : 0;
    for (int m = first_set(s.minutes, minute_from); m >= 0; m = first_set(s.minutes, m + 1)) {
      const int second_from = h == hour && m == minute ? second : 0;
      const int sec = first_set(s.seconds, second_from);
      if (sec >= 0) return h * 3600L + m * 60L + sec;
    }
  }
  return -1;
}

}  // namespace

LocalSeconds civil_search_limit(LocalSeconds from) { return from + seconds{146097LL * 86400}; }

std::optional<LocalSeconds> next_civil_match(const CronSchedule& s, LocalSeconds from, LocalSeconds limit) {
  const date::sys_days first_day = date::floor<date::days>(date::sys_seconds{from});
  long start_tod = (from - first_day.time_since_epoch()).count();  // on the first day only
  const date::year_month_day first{first_day};
  int year = static_cast<int>(first.year());
  unsigned month = static_cast<unsigned>(first.month());
  unsigned day = static_cast<unsigned>(first.day());
  const auto next_day_from_midnight = [&] {
    ++day;
    start_tod = 0;
  };
  for (;;) {
    const date::year_month_day ymd{date::year{year}, date::month{month}, date::day{1}};
    const date::sys_days month_start{ymd};
    if (LocalSeconds{month_start.time_since_epoch()} >= limit) return std::nullopt;
    if (!s.months[month]) {
      const int next = first_set(s.months, static_cast<int>(month) + 1);
      if (next < 0) {
        ++year;
        month = static_cast<unsigned>(first_set(s.months, 1));
      } else {
        month = static_cast<unsigned>(next);
      }
      day = 1;
      start_tod = 0;
      continue;
    }
    const date::year_month_day_last month_end{date::year{year}, date::month_day_last{date::month{month}}};
    const unsigned last = static_cast<unsigned>(month_end.day());
    if (day > last) {
      if (++month > 12) {
        month = 1;
        ++year;
      }
      day = 1;
      start_tod = 0;
      continue;
    }
    const date::sys_days today = month_start + date::days{day - 1};
    const LocalSeconds midnight{today.time_since_epoch()};
    if (midnight >= limit) return std::nullopt;
    const unsigned weekday = date::weekday{today}.c_encoding();
    if (!s.matches_day(month, day, weekday)) {
      next_day_from_midnight();
      continue;
    }
    const long tod = first_time_of_day(s, static_cast<int>(start_tod / 3600), static_cast<int>(start_tod / 60 % 60),
                                       static_cast<int>(start_tod % 60));
    if (tod >= 0) {
      const LocalSeconds found = midnight + seconds{tod};
      if (found >= limit) return std::nullopt;
      return found;
    }
    next_day_from_midnight();
  }
}

}  // namespace expiry
