// A cron expression parsed into the sets of values each field matches, as Vixie cron and cronie
// read a crontab line's schedule. Pure.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

namespace expiry {

struct CronSchedule {
  std::bitset<60> seconds;           // 0-59; {0} for a 5-field expression
  std::bitset<60> minutes;           // 0-59
  std::bitset<24> hours;             // 0-23
  std::bitset<32> days_of_month;     // 1-31 (bit 0 unused)
  std::bitset<13> months;            // 1-12 (bit 0 unused)
  std::bitset<7> days_of_week;       // 0-6, 0 = Sunday (a 7 in the text is Sunday too)
  // The day fields' text starts with '*' or '?' (so "*/2" counts too, as in Vixie cron's
  // DOM_STAR/DOW_STAR). When both are restricted a day matches when EITHER matches; when
  // either starts with '*', a day must match both (the starred one matches every day, or for
  // "*/2" its own steps).
  bool dom_star = false;
  bool dow_star = false;
  // One value in the minute and hour fields (and in the seconds field of a 6-field expression):
  // such a job fires once per local day, at the first instant after a daylight-saving gap that
  // skips its time and at the earlier of the two instants of a repeated time (occurrences.h).
  bool fixed_time = false;
  std::string text;                  // canonical text: see parse_cron_schedule

  // Whether the local calendar day year-month-day (weekday 0-6, 0 = Sunday) matches the day,
  // month and weekday fields.
  bool matches_day(unsigned month, unsigned day, unsigned weekday) const;
};

// Parses "min hour dom month dow" or "sec min hour dom month dow", fields separated by spaces or
// tabs, or a macro: @yearly (@annually) "0 0 1 1 *", @monthly "0 0 1 * *", @weekly "0 0 * * 0",
// @daily (@midnight) "0 0 * * *", @hourly "0 * * * *". A field is a comma-separated list of
// "*", "N", "A-B", "*/S", "A-B/S" or "A/S" (A to the field's maximum in steps of S); months
// may be named JAN-DEC and weekdays SUN-SAT, in any case; weekday 7 is Sunday; "?" means "*"
// in the day fields. Throws ConfigError naming the field and the text at fault, e.g.
// "cron: minute field '61' is out of range 0-59", or "cron: '0 0 31 2 *' never fires" for a
// schedule no day of a 400-year Gregorian cycle matches.
// The canonical text: macros by their first name (@annually is @yearly, @midnight @daily), else
// the fields joined by one space, names in upper case, "?" as "*".
CronSchedule parse_cron_schedule(std::string_view text);

}  // namespace expiry
