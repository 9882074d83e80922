// recur/cron_schedule.h and recur/recur_rule.h: parsing, canonical text, errors.
#include <gtest/gtest.h>

#include <string>

#include "base/errors.h"
#include "recur/recur_rule.h"
#include "recur/time_zone.h"

namespace expiry {
namespace {

// parse_duration_ms's syntax (base/duration_text.h), which expiry-ctl passes: digits and ms|s|m|h.
std::optional<long long> test_period(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  const long long value = std::stoll(std::string(text.substr(0, digits)));
  const std::string_view unit = text.substr(digits);
  if (unit.empty() || unit == "ms") return value;
  if (unit == "s") return value * 1000;
  if (unit == "m") return value * 60000;
  if (unit == "h") return value * 3600000;
  return std::nullopt;
}

std::string error_of(const std::string& text) {
  try {
    parse_recur_rule(text, test_period, 0);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

template <size_t N>
std::string set_values(const std::bitset<N>& set) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (!set[i]) continue;
    if (!out.empty()) out += ',';
    out += std::to_string(i);
  }
  return out;
}

struct CanonicalCase {
  const char* text;
  const char* canonical;
  bool fixed_time;
};

TEST(CronParse, CanonicalTextAndFixedTime) {
  const CanonicalCase cases[] = {
      {"30 2 * * *", "30 2 * * *", true},
      {"  30\t2  *  *   * ", "30 2 * * *", true},
      {"*/15 * * * *", "*/15 * * * *", false},
      {"0 1,2 * * *", "0 1,2 * * *", false},
      {"0 1-3 * * *", "0 1-3 * * *", false},
      {"0 9 ? jan-mar mon-fri", "0 9 * JAN-MAR MON-FRI", true},
      {"0 9 1 * ?", "0 9 1 * *", true},
      {"5 30 2 * * *", "5 30 2 * * *", true},
      {"*/5 30 2 * * *", "*/5 30 2 * * *", false},
      {"@yearly", "@yearly", true},
      {"@annually", "@yearly", true},
      {"@MONTHLY", "@monthly", true},
      {"@weekly", "@weekly", true},
      {"@daily", "@daily", true},
      {"@midnight", "@daily", true},
      {"@hourly", "@hourly", false},
  };
  for (const CanonicalCase& c : cases) {
    const RecurRule rule = parse_recur_rule(c.text, test_period, 0);
    ASSERT_TRUE(std::holds_alternative<CronSchedule>(rule)) << c.text;
    EXPECT_EQ(canonical_text(rule), c.canonical) << c.text;
    EXPECT_EQ(std::get<CronSchedule>(rule).fixed_time, c.fixed_time) << c.text;
    // The canonical text reads back to the same schedule.
    const RecurRule again = parse_recur_rule(canonical_text(rule), test_period, 0);
    EXPECT_EQ(canonical_text(again), c.canonical) << c.text;
  }
}

struct FieldCase {
  const char* text;
  const char* seconds;
  const char* minutes;
  const char* hours;
  const char* days;
  const char* months;
  const char* weekdays;
  bool dom_star;
  bool dow_star;
};

TEST(CronParse, FieldValues) {
  const FieldCase cases[] = {
      {"0 0 1 1 *", "0", "0", "0", "1", "1", "0,1,2,3,4,5,6", false, true},
      {"*/20 0-10/5 22-23 1,15,31 */4 *", "0,20,40", "0,5,10", "22,23", "1,15,31", "1,5,9", "0,1,2,3,4,5,6", false, true},
      {"10/20 * * * *", "0", "10,30,50", "", "", "", "", true, true},
      {"0 0 * * 7", "0", "0", "0", "", "", "0", true, false},
      {"0 0 * * 0,7", "0", "0", "0", "", "", "0", true, false},
      {"0 0 * * 5-7", "0", "0", "0", "", "", "0,5,6", true, false},
      {"0 0 * * FRI-SUN", "0", "0", "0", "", "", "0,5,6", true, false},
      {"0 0 * * sun,Wed,SAT", "0", "0", "0", "", "", "0,3,6", true, false},
      {"0 0 * feb,DEC *", "0", "0", "0", "", "2,12", "", true, true},
      {"0 0 */2 * 1", "0", "0", "0", "1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31", "", "1", true, false},
      {"0 0 ? * ?", "0", "0", "0", "", "", "", true, true},
      {"1,2 3 4 5 6 0", "1,2", "3", "4", "5", "6", "0", false, false},
  };
  for (const FieldCase& c : cases) {
    const CronSchedule s = parse_cron_schedule(c.text);
    EXPECT_EQ(set_values(s.seconds), c.seconds) << c.text;
    EXPECT_EQ(set_values(s.minutes), c.minutes) << c.text;
    if (*c.hours) {  // "": not checked
      EXPECT_EQ(set_values(s.hours), c.hours) << c.text;
    }
    if (*c.days) {  // "": not checked
      EXPECT_EQ(set_values(s.days_of_month), c.days) << c.text;
    }
    if (*c.months) {  // "": not checked
      EXPECT_EQ(set_values(s.months), c.months) << c.text;
    }
    if (*c.weekdays) {  // "": not checked
      EXPECT_EQ(set_values(s.days_of_week), c.weekdays) << c.text;
    }
    EXPECT_EQ(s.dom_star, c.dom_star) << c.text;
    EXPECT_EQ(s.dow_star, c.dow_star) << c.text;
  }
}

TEST(CronParse, DayOfMonthAndDayOfWeekCombine) {
  // Both restricted: either matches (the 13th, and every Friday).
  const CronSchedule either = parse_cron_schedule("0 0 13 * FRI");
  EXPECT_TRUE(either.matches_day(3, 13, 2));   // a Tuesday the 13th
  EXPECT_TRUE(either.matches_day(3, 6, 5));    // Friday the 6th
  EXPECT_FALSE(either.matches_day(3, 7, 6));
  // One starred: only the other restricts.
  const CronSchedule weekday_only = parse_cron_schedule("0 0 * * FRI");
  EXPECT_TRUE(weekday_only.matches_day(3, 6, 5));
  EXPECT_FALSE(weekday_only.matches_day(3, 13, 2));
  // "*/2" starts with '*': as in Vixie cron and cronie both must match (odd days that are Mondays).
  const CronSchedule both = parse_cron_schedule("0 0 */2 * MON");
  EXPECT_TRUE(both.matches_day(3, 9, 1));
  EXPECT_FALSE(both.matches_day(3, 16, 1));
  EXPECT_FALSE(both.matches_day(3, 11, 3));
  // The month always restricts.
  EXPECT_FALSE(parse_cron_schedule("0 0 13 JAN FRI").matches_day(3, 13, 5));
}

struct ErrorCase {
  const char* text;
  const char* message;
};

TEST(CronParse, ErrorsNameTheFieldAndText) {
  const ErrorCase cases[] = {
      {"61 * * * *", "cron: minute field '61' is out of range 0-59"},
      {"0 24 * * *", "cron: hour field '24' is out of range 0-23"},
      {"0 0 0 * *", "cron: day-of-month field '0' is out of range 1-31"},
      {"0 0 32 * *", "cron: day-of-month field '32' is out of range 1-31"},
      {"0 0 * 13 *", "cron: month field '13' is out of range 1-12"},
      {"0 0 * * 8", "cron: day-of-week field '8' is out of range 0-7"},
      {"60 0 0 * * *", "cron: second field '60' is out of range 0-59"},
      {"0 0 * FOO *", "cron: month field 'FOO' is not a month number 1-12 or name JAN-DEC"},
      {"0 0 * * MONDAY", "cron: day-of-week field 'MONDAY' is not a weekday number 0-7 or name SUN-SAT"},
      {"x * * * *", "cron: minute field 'x' is not a number"},
      {"1- * * * *", "cron: minute field '1-' is an incomplete range"},
      {"5-1 * * * *", "cron: minute field '5-1' is a backwards range"},
      {"*/0 * * * *", "cron: minute field '*/0' has a step that is not a number 1-60"},
      {"*/x * * * *", "cron: minute field '*/x' has a step that is not a number 1-60"},
      {"1,,2 * * * *", "cron: minute field '1,,2' has an empty list element"},
      {"? * * * *", "cron: minute field '?' is not allowed ('?' is for the day-of-month and day-of-week fields)"},
      {"0 0 ?/2 * *", "cron: day-of-month field '?/2' steps '?', which only stands alone"},
      {"* * * *", "cron: expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), "
                  "or a macro such as @daily, got 4 in '* * * *'"},
      {"* * * * * * *", "cron: expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds "
                        "first), or a macro such as @daily, got 7 in '* * * * * * *'"},
      {"", "cron: expected 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first), or a "
           "macro such as @daily, got 0 in ''"},
      {"@reboot", "cron: unknown macro '@reboot' (known: @yearly @annually @monthly @weekly @daily @midnight @hourly)"},
      {"0 0 31 2 *", "cron: '0 0 31 2 *' never fires (no day matches its day and month fields)"},
      {"0 0 30 2 *", "cron: '0 0 30 2 *' never fires (no day matches its day and month fields)"},
      {"0 0 31 4,6,9,11 *", "cron: '0 0 31 4,6,9,11 *' never fires (no day matches its day and month fields)"},
      {"@every", "every: '' is not a period such as 30s, 15m or 2h"},
      {"@every 15x", "every: '15x' is not a period such as 30s, 15m or 2h"},
      {"@every 0s", "every: '0s' is not a period such as 30s, 15m or 2h"},
  };
  for (const ErrorCase& c : cases) EXPECT_EQ(error_of(c.text), c.message) << c.text;
}

TEST(CronParse, RareButPossibleSchedulesAreValid) {
  for (const char* text : {"0 0 29 2 *", "0 0 31 12 *", "0 0 29 2 0", "0 0 */28 2 */7", "0 0 31 */2 *"}) {
    EXPECT_EQ(error_of(text), "(no error)") << text;
  }
}

struct IntervalCase {
  const char* text;
  long long period_ms;
  const char* canonical;
};

TEST(IntervalParse, PeriodAndCanonicalText) {
  const IntervalCase cases[] = {
      {"@every 15m", 900000, "@every 15m"},
      {"@EVERY   90m ", 5400000, "@every 90m"},
      {"@every 120m", 7200000, "@every 2h"},
      {"@every 3600s", 3600000, "@every 1h"},
      {"@every 1500", 1500, "@every 1500ms"},
      {"@every 2000ms", 2000, "@every 2s"},
  };
  for (const IntervalCase& c : cases) {
    const RecurRule rule = parse_recur_rule(c.text, test_period, 1000);
    ASSERT_TRUE(std::holds_alternative<IntervalSchedule>(rule)) << c.text;
    EXPECT_EQ(std::get<IntervalSchedule>(rule).period.count(), c.period_ms) << c.text;
    EXPECT_EQ(std::get<IntervalSchedule>(rule).anchor_ms, 1000) << c.text;
    EXPECT_EQ(canonical_text(rule), c.canonical) << c.text;
  }
  // "@everyday" is not "@every" and a period: it is an unknown cron macro.
  EXPECT_EQ(error_of("@everyday"),
            "cron: unknown macro '@everyday' (known: @yearly @annually @monthly @weekly @daily @midnight @hourly)");
}

TEST(RuleDescribe, NamesKindTextAndAnchor) {
  EXPECT_EQ(describe(parse_recur_rule("30 2 * * *", test_period, 0)), "cron '30 2 * * *' (fixed time: once per local day)");
  EXPECT_EQ(describe(parse_recur_rule("*/15 * * * *", test_period, 0)), "cron '*/15 * * * *'");
  EXPECT_EQ(describe(parse_recur_rule("@every 15m", test_period, 1774742400000)),
            "interval '@every 15m' from 2026-03-29T00:00:00.000Z");
}

TEST(IntervalFlag, NeedsAUnitAndAtLeastOneSecond) {
  EXPECT_FALSE(interval_flag_error("30s", false));
  EXPECT_FALSE(interval_flag_error("1s", false));
  EXPECT_FALSE(interval_flag_error("1500ms", false));
  EXPECT_FALSE(interval_flag_error("2h", false));
  ASSERT_TRUE(interval_flag_error("1", false));
  EXPECT_NE(interval_flag_error("1", false)->find("needs a unit"), std::string::npos);
  EXPECT_TRUE(interval_flag_error("1", true)) << "a unit is needed even when sub-second periods are allowed";
  ASSERT_TRUE(interval_flag_error("1ms", false));
  EXPECT_NE(interval_flag_error("1ms", false)->find("--allow-sub-second"), std::string::npos);
  EXPECT_FALSE(interval_flag_error("1ms", true));
  EXPECT_TRUE(interval_flag_error("0s", true));
  EXPECT_TRUE(interval_flag_error("soon", false));
  EXPECT_TRUE(interval_flag_error("", false));
}

TEST(TimeZoneName, RefusesNamesThatDifferBetweenMachines) {
  EXPECT_FALSE(time_zone_name_error("Europe/Berlin"));
  EXPECT_FALSE(time_zone_name_error("UTC"));
  EXPECT_FALSE(time_zone_name_error("America/Argentina/Buenos_Aires"));
  for (const char* name : {"localtime", "posixrules", "Factory", "posix/Europe/Berlin", "right/UTC"}) {
    EXPECT_TRUE(time_zone_name_error(name)) << name;
  }
}

}  // namespace
}  // namespace expiry
