// recur/occurrences.h and recur/occurrence_format.h: next occurrences in time zones, with Vixie
// cron's daylight-saving semantics. The expected instants were worked out from each zone's
// transitions and checked against Python's zoneinfo on the same tzdata while writing the tests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/errors.h"
#include "recur/occurrence_format.h"
#include "recur/occurrences.h"
#include "recur/time_text.h"

namespace expiry {
namespace {

std::optional<long long> minutes_period(std::string_view text) {
  if (text.empty() || text.back() != 'm') return std::nullopt;
  return std::stoll(std::string(text.substr(0, text.size() - 1))) * 60000;
}

std::int64_t utc(const char* iso) { return parse_time_arg(iso, TimeZone::utc()); }

struct OccurrenceCase {
  const char* name;
  const char* rule;
  const char* zone;
  const char* after;                 // UTC
  size_t limit;
  std::vector<const char*> lines;    // "<utc_iso> <local_iso>"
  const char* start = nullptr;       // UTC, optional
  const char* end = nullptr;         // UTC, optional
  const char* anchor = "2026-03-29T00:07:00Z";  // interval rules
};

std::vector<std::string> lines_of(const OccurrenceCase& c) {
  const RecurRule rule = parse_recur_rule(c.rule, minutes_period, utc(c.anchor));
  OccurrenceQuery query;
  query.after_ms = utc(c.after);
  if (c.start) query.start_ms = utc(c.start);
  if (c.end) query.end_ms = utc(c.end);
  query.limit = c.limit;
  std::vector<std::string> lines;
  for (const Occurrence& o : next_occurrences(rule, TimeZone::find(c.zone), query)) {
    lines.push_back(o.utc_iso + " " + o.local_iso);
  }
  return lines;
}

void expect_cases(const std::vector<OccurrenceCase>& cases) {
  for (const OccurrenceCase& c : cases) {
    const std::vector<std::string> expected(c.lines.begin(), c.lines.end());
    EXPECT_EQ(lines_of(c), expected) << c.name << ": '" << c.rule << "' in " << c.zone << " after " << c.after;
  }
}

TEST(CronDst, FixedTimeFiresOncePerLocalDay) {
  expect_cases({
      {"Berlin spring gap: 02:30 fires at 03:00+02:00", "30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z", 3,
       {"2026-03-28T01:30:00.000Z 2026-03-28T02:30:00.000+01:00",
        "2026-03-29T01:00:00.000Z 2026-03-29T03:00:00.000+02:00",
        "2026-03-30T00:30:00.000Z 2026-03-30T02:30:00.000+02:00"}},
      {"Berlin fall back: once, at the earlier 02:30", "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 2,
       {"2026-10-25T00:30:00.000Z 2026-10-25T02:30:00.000+02:00",
        "2026-10-26T01:30:00.000Z 2026-10-26T02:30:00.000+01:00"}},
      {"Berlin fall back, asked from inside the repeated hour", "30 2 * * *", "Europe/Berlin",
       "2026-10-25T01:15:00Z", 1, {"2026-10-26T01:30:00.000Z 2026-10-26T02:30:00.000+01:00"}},
      {"6 fields, seconds fixed: the gap too", "30 30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 2,
       {"2026-03-29T01:00:00.000Z 2026-03-29T03:00:00.000+02:00",
        "2026-03-30T00:30:30.000Z 2026-03-30T02:30:30.000+02:00"}},
      {"New York spring gap", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", 3,
       {"2026-03-08T07:00:00.000Z 2026-03-08T03:00:00.000-04:00",
        "2026-03-09T06:30:00.000Z 2026-03-09T02:30:00.000-04:00",
        "2026-03-10T06:30:00.000Z 2026-03-10T02:30:00.000-04:00"}},
      {"New York fall back", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 2,
       {"2026-11-01T05:30:00.000Z 2026-11-01T01:30:00.000-04:00",
        "2026-11-02T06:30:00.000Z 2026-11-02T01:30:00.000-05:00"}},
      {"Lord Howe: a 30-minute gap", "15 2 * * *", "Australia/Lord_Howe", "2026-10-02T12:00:00Z", 3,
       {"2026-10-02T15:45:00.000Z 2026-10-03T02:15:00.000+10:30",
        "2026-10-03T15:30:00.000Z 2026-10-04T02:30:00.000+11:00",
        "2026-10-04T15:15:00.000Z 2026-10-05T02:15:00.000+11:00"}},
      {"Lord Howe: a repeated half hour", "45 1 * * *", "Australia/Lord_Howe", "2026-04-03T12:00:00Z", 3,
       {"2026-04-03T14:45:00.000Z 2026-04-04T01:45:00.000+11:00",
        "2026-04-04T14:45:00.000Z 2026-04-05T01:45:00.000+11:00",
        "2026-04-05T15:15:00.000Z 2026-04-06T01:45:00.000+10:30"}},
      {"Kathmandu +05:45", "0 9 * * *", "Asia/Kathmandu", "2026-01-01T00:00:00Z", 2,
       {"2026-01-01T03:15:00.000Z 2026-01-01T09:00:00.000+05:45",
        "2026-01-02T03:15:00.000Z 2026-01-02T09:00:00.000+05:45"}},
      {"Apia skipped 2011-12-30: daily at midnight", "0 0 * * *", "Pacific/Apia", "2011-12-28T12:00:00Z", 3,
       {"2011-12-29T10:00:00.000Z 2011-12-29T00:00:00.000-10:00",
        "2011-12-30T10:00:00.000Z 2011-12-31T00:00:00.000+14:00",
        "2011-12-31T10:00:00.000Z 2012-01-01T00:00:00.000+14:00"}},
      {"Apia skipped 2011-12-30: daily at noon, no catch-up for a day", "0 12 * * *", "Pacific/Apia",
       "2011-12-28T12:00:00Z", 3,
       {"2011-12-28T22:00:00.000Z 2011-12-28T12:00:00.000-10:00",
        "2011-12-29T22:00:00.000Z 2011-12-29T12:00:00.000-10:00",
        "2011-12-30T22:00:00.000Z 2011-12-31T12:00:00.000+14:00"}},
  });
}

TEST(CronDst, WildcardSchedulesFollowRealTime) {
  expect_cases({
      {"Berlin: the skipped hour has no matches", "*/30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 4,
       {"2026-03-28T01:00:00.000Z 2026-03-28T02:00:00.000+01:00",
        "2026-03-28T01:30:00.000Z 2026-03-28T02:30:00.000+01:00",
        "2026-03-30T00:00:00.000Z 2026-03-30T02:00:00.000+02:00",
        "2026-03-30T00:30:00.000Z 2026-03-30T02:30:00.000+02:00"}},
      {"Berlin: the repeated hour matches twice", "*/30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 5,
       {"2026-10-25T00:00:00.000Z 2026-10-25T02:00:00.000+02:00",
        "2026-10-25T00:30:00.000Z 2026-10-25T02:30:00.000+02:00",
        "2026-10-25T01:00:00.000Z 2026-10-25T02:00:00.000+01:00",
        "2026-10-25T01:30:00.000Z 2026-10-25T02:30:00.000+01:00",
        "2026-10-26T01:00:00.000Z 2026-10-26T02:00:00.000+01:00"}},
      {"@hourly across fall back", "@hourly", "Europe/Berlin", "2026-10-24T21:30:00Z", 5,
       {"2026-10-24T22:00:00.000Z 2026-10-25T00:00:00.000+02:00",
        "2026-10-24T23:00:00.000Z 2026-10-25T01:00:00.000+02:00",
        "2026-10-25T00:00:00.000Z 2026-10-25T02:00:00.000+02:00",
        "2026-10-25T01:00:00.000Z 2026-10-25T02:00:00.000+01:00",
        "2026-10-25T02:00:00.000Z 2026-10-25T03:00:00.000+01:00"}},
      {"@hourly across spring forward", "@hourly", "Europe/Berlin", "2026-03-28T23:30:00Z", 3,
       {"2026-03-29T00:00:00.000Z 2026-03-29T01:00:00.000+01:00",
        "2026-03-29T01:00:00.000Z 2026-03-29T03:00:00.000+02:00",
        "2026-03-29T02:00:00.000Z 2026-03-29T04:00:00.000+02:00"}},
      {"every second across fall back", "* * * * * *", "Europe/Berlin", "2026-10-25T00:59:58.999Z", 3,
       {"2026-10-25T00:59:59.000Z 2026-10-25T02:59:59.000+02:00",
        "2026-10-25T01:00:00.000Z 2026-10-25T02:00:00.000+01:00",
        "2026-10-25T01:00:01.000Z 2026-10-25T02:00:01.000+01:00"}},
      {"a list in the hour field is not a fixed time", "0 1,2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 4,
       {"2026-10-24T23:00:00.000Z 2026-10-25T01:00:00.000+02:00",
        "2026-10-25T00:00:00.000Z 2026-10-25T02:00:00.000+02:00",
        "2026-10-25T01:00:00.000Z 2026-10-25T02:00:00.000+01:00",
        "2026-10-26T00:00:00.000Z 2026-10-26T01:00:00.000+01:00"}},
      {"New York: the skipped hour", "*/30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z", 3,
       {"2026-03-07T07:00:00.000Z 2026-03-07T02:00:00.000-05:00",
        "2026-03-07T07:30:00.000Z 2026-03-07T02:30:00.000-05:00",
        "2026-03-09T06:00:00.000Z 2026-03-09T02:00:00.000-04:00"}},
      {"New York: the repeated hour", "*/30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 5,
       {"2026-11-01T05:00:00.000Z 2026-11-01T01:00:00.000-04:00",
        "2026-11-01T05:30:00.000Z 2026-11-01T01:30:00.000-04:00",
        "2026-11-01T06:00:00.000Z 2026-11-01T01:00:00.000-05:00",
        "2026-11-01T06:30:00.000Z 2026-11-01T01:30:00.000-05:00",
        "2026-11-02T06:00:00.000Z 2026-11-02T01:00:00.000-05:00"}},
      {"Lord Howe: the repeated half hour", "*/15 1 * * *", "Australia/Lord_Howe", "2026-04-04T13:00:00Z", 7,
       {"2026-04-04T14:00:00.000Z 2026-04-05T01:00:00.000+11:00",
        "2026-04-04T14:15:00.000Z 2026-04-05T01:15:00.000+11:00",
        "2026-04-04T14:30:00.000Z 2026-04-05T01:30:00.000+11:00",
        "2026-04-04T14:45:00.000Z 2026-04-05T01:45:00.000+11:00",
        "2026-04-04T15:00:00.000Z 2026-04-05T01:30:00.000+10:30",
        "2026-04-04T15:15:00.000Z 2026-04-05T01:45:00.000+10:30",
        "2026-04-05T14:30:00.000Z 2026-04-06T01:00:00.000+10:30"}},
      {"Lord Howe: the skipped half hour", "*/15 2 * * *", "Australia/Lord_Howe", "2026-10-03T13:00:00Z", 4,
       {"2026-10-03T15:30:00.000Z 2026-10-04T02:30:00.000+11:00",
        "2026-10-03T15:45:00.000Z 2026-10-04T02:45:00.000+11:00",
        "2026-10-04T15:00:00.000Z 2026-10-05T02:00:00.000+11:00",
        "2026-10-04T15:15:00.000Z 2026-10-05T02:15:00.000+11:00"}},
      {"Apia: hourly across the skipped day", "0 * * * *", "Pacific/Apia", "2011-12-30T08:30:00Z", 3,
       {"2011-12-30T09:00:00.000Z 2011-12-29T23:00:00.000-10:00",
        "2011-12-30T10:00:00.000Z 2011-12-31T00:00:00.000+14:00",
        "2011-12-30T11:00:00.000Z 2011-12-31T01:00:00.000+14:00"}},
  });
}

// bull #2207: a weekly job fired twice when the clocks went back. Once here, both ways.
TEST(CronDst, WeeklyJobFiresOnceAcrossTransitions) {
  expect_cases({
      {"Berlin fall back", "30 2 * * SUN", "Europe/Berlin", "2026-10-18T12:00:00Z", 3,
       {"2026-10-25T00:30:00.000Z 2026-10-25T02:30:00.000+02:00",
        "2026-11-01T01:30:00.000Z 2026-11-01T02:30:00.000+01:00",
        "2026-11-08T01:30:00.000Z 2026-11-08T02:30:00.000+01:00"}},
      {"Berlin spring forward", "30 2 * * 7", "Europe/Berlin", "2026-03-22T12:00:00Z", 2,
       {"2026-03-29T01:00:00.000Z 2026-03-29T03:00:00.000+02:00",
        "2026-04-05T00:30:00.000Z 2026-04-05T02:30:00.000+02:00"}},
      {"New York fall back", "30 1 * * 0", "America/New_York", "2026-10-25T12:00:00Z", 2,
       {"2026-11-01T05:30:00.000Z 2026-11-01T01:30:00.000-04:00",
        "2026-11-08T06:30:00.000Z 2026-11-08T01:30:00.000-05:00"}},
      {"@weekly across spring forward", "@weekly", "Europe/Berlin", "2026-03-22T12:00:00Z", 3,
       {"2026-03-28T23:00:00.000Z 2026-03-29T00:00:00.000+01:00",
        "2026-04-04T22:00:00.000Z 2026-04-05T00:00:00.000+02:00",
        "2026-04-11T22:00:00.000Z 2026-04-12T00:00:00.000+02:00"}},
  });
}

TEST(CronOccurrences, CalendarRules) {
  expect_cases({
      {"dom OR dow: Fridays and the 13th (a Monday)", "0 0 13 * FRI", "UTC", "2026-04-01T00:00:00Z", 6,
       {"2026-04-03T00:00:00.000Z 2026-04-03T00:00:00.000+00:00",
        "2026-04-10T00:00:00.000Z 2026-04-10T00:00:00.000+00:00",
        "2026-04-13T00:00:00.000Z 2026-04-13T00:00:00.000+00:00",
        "2026-04-17T00:00:00.000Z 2026-04-17T00:00:00.000+00:00",
        "2026-04-24T00:00:00.000Z 2026-04-24T00:00:00.000+00:00",
        "2026-05-01T00:00:00.000Z 2026-05-01T00:00:00.000+00:00"}},
      {"starred dom AND dow: odd days that are Mondays", "0 0 */2 * MON", "UTC", "2026-03-01T00:00:00Z", 4,
       {"2026-03-09T00:00:00.000Z 2026-03-09T00:00:00.000+00:00",
        "2026-03-23T00:00:00.000Z 2026-03-23T00:00:00.000+00:00",
        "2026-04-13T00:00:00.000Z 2026-04-13T00:00:00.000+00:00",
        "2026-04-27T00:00:00.000Z 2026-04-27T00:00:00.000+00:00"}},
      {"Feb 29 only in leap years", "0 0 29 2 *", "UTC", "2026-01-01T00:00:00Z", 3,
       {"2028-02-29T00:00:00.000Z 2028-02-29T00:00:00.000+00:00",
        "2032-02-29T00:00:00.000Z 2032-02-29T00:00:00.000+00:00",
        "2036-02-29T00:00:00.000Z 2036-02-29T00:00:00.000+00:00"}},
      {"Feb 29: 2100 is not a leap year", "0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z", 2,
       {"2104-02-29T00:00:00.000Z 2104-02-29T00:00:00.000+00:00",
        "2108-02-29T00:00:00.000Z 2108-02-29T00:00:00.000+00:00"}},
      {"Feb 29 in Berlin", "0 0 29 2 *", "Europe/Berlin", "2026-01-01T00:00:00Z", 1,
       {"2028-02-28T23:00:00.000Z 2028-02-29T00:00:00.000+01:00"}},
      {"6 fields: every 20 seconds, after a fraction", "*/20 * * * * *", "UTC", "2026-01-01T00:00:00.500Z", 4,
       {"2026-01-01T00:00:20.000Z 2026-01-01T00:00:20.000+00:00",
        "2026-01-01T00:00:40.000Z 2026-01-01T00:00:40.000+00:00",
        "2026-01-01T00:01:00.000Z 2026-01-01T00:01:00.000+00:00",
        "2026-01-01T00:01:20.000Z 2026-01-01T00:01:20.000+00:00"}},
      {"strictly after: an occurrence at after_ms is not returned", "0 * * * *", "UTC", "2026-01-01T05:00:00Z", 1,
       {"2026-01-01T06:00:00.000Z 2026-01-01T06:00:00.000+00:00"}},
      {"start and end bounds, both inclusive", "0 * * * *", "UTC", "2026-01-01T00:00:00Z", 10,
       {"2026-01-01T05:00:00.000Z 2026-01-01T05:00:00.000+00:00",
        "2026-01-01T06:00:00.000Z 2026-01-01T06:00:00.000+00:00",
        "2026-01-01T07:00:00.000Z 2026-01-01T07:00:00.000+00:00"},
       "2026-01-01T05:00:00Z", "2026-01-01T07:00:00Z"},
      {"fixed time with an end bound", "30 2 * * *", "Europe/Berlin", "2026-03-27T12:00:00Z", 10,
       {"2026-03-28T01:30:00.000Z 2026-03-28T02:30:00.000+01:00",
        "2026-03-29T01:00:00.000Z 2026-03-29T03:00:00.000+02:00"},
       nullptr, "2026-03-29T01:00:00Z"},
      {"nothing after the year 9999", "0 0 1 1 *", "UTC", "9998-06-01T00:00:00Z", 5,
       {"9999-01-01T00:00:00.000Z 9999-01-01T00:00:00.000+00:00"}},
  });
}

TEST(CronOccurrences, Macros) {
  expect_cases({
      {"@yearly", "@yearly", "UTC", "2026-05-05T00:00:00Z", 2,
       {"2027-01-01T00:00:00.000Z 2027-01-01T00:00:00.000+00:00",
        "2028-01-01T00:00:00.000Z 2028-01-01T00:00:00.000+00:00"}},
      {"@annually", "@annually", "Asia/Kathmandu", "2026-05-05T00:00:00Z", 1,
       {"2026-12-31T18:15:00.000Z 2027-01-01T00:00:00.000+05:45"}},
      {"@monthly", "@monthly", "UTC", "2026-01-31T00:00:00Z", 2,
       {"2026-02-01T00:00:00.000Z 2026-02-01T00:00:00.000+00:00",
        "2026-03-01T00:00:00.000Z 2026-03-01T00:00:00.000+00:00"}},
      {"@weekly", "@weekly", "UTC", "2026-03-01T00:00:00Z", 2,
       {"2026-03-08T00:00:00.000Z 2026-03-08T00:00:00.000+00:00",
        "2026-03-15T00:00:00.000Z 2026-03-15T00:00:00.000+00:00"}},
      {"@daily", "@daily", "America/New_York", "2026-03-07T12:00:00Z", 2,
       {"2026-03-08T05:00:00.000Z 2026-03-08T00:00:00.000-05:00",
        "2026-03-09T04:00:00.000Z 2026-03-09T00:00:00.000-04:00"}},
      {"@midnight", "@midnight", "UTC", "2026-03-07T12:00:00Z", 1,
       {"2026-03-08T00:00:00.000Z 2026-03-08T00:00:00.000+00:00"}},
      {"@hourly", "@hourly", "Asia/Kathmandu", "2026-03-07T12:00:00Z", 2,
       {"2026-03-07T12:15:00.000Z 2026-03-07T18:00:00.000+05:45",
        "2026-03-07T13:15:00.000Z 2026-03-07T19:00:00.000+05:45"}},
  });
}

TEST(IntervalOccurrences, AnchoredInUtc) {
  expect_cases({
      {"every 15m across Berlin's gap", "@every 15m", "Europe/Berlin", "2026-03-29T00:50:00Z", 3,
       {"2026-03-29T00:52:00.000Z 2026-03-29T01:52:00.000+01:00",
        "2026-03-29T01:07:00.000Z 2026-03-29T03:07:00.000+02:00",
        "2026-03-29T01:22:00.000Z 2026-03-29T03:22:00.000+02:00"}},
      {"before the anchor: the anchor first", "@every 15m", "UTC", "2026-03-28T00:00:00Z", 2,
       {"2026-03-29T00:07:00.000Z 2026-03-29T00:07:00.000+00:00",
        "2026-03-29T00:22:00.000Z 2026-03-29T00:22:00.000+00:00"}},
      {"at an occurrence: the next one", "@every 15m", "UTC", "2026-03-29T00:22:00Z", 1,
       {"2026-03-29T00:37:00.000Z 2026-03-29T00:37:00.000+00:00"}},
      {"start and end bounds", "@every 15m", "UTC", "2026-03-28T00:00:00Z", 10,
       {"2026-03-29T01:07:00.000Z 2026-03-29T01:07:00.000+00:00",
        "2026-03-29T01:22:00.000Z 2026-03-29T01:22:00.000+00:00"},
       "2026-03-29T01:00:00Z", "2026-03-29T01:22:00Z"},
      {"the end before after", "@every 15m", "UTC", "2026-03-29T02:00:00Z", 10, {}, nullptr,
       "2026-03-29T01:00:00Z"},
      {"limit 0", "@every 15m", "UTC", "2026-03-29T02:00:00Z", 0, {}},
  });
}

TEST(CronOccurrences, FarSearchesStepByField) {
  // Each would take years of per-second steps; by field they are instant.
  const RecurRule every_second = parse_cron_schedule("* * * * * *");
  OccurrenceQuery query;
  query.after_ms = utc("2026-01-01T00:00:00Z");
  query.limit = 5000;
  const std::vector<std::int64_t> seconds = next_instants(every_second, TimeZone::find("Europe/Berlin"), query);
  ASSERT_EQ(seconds.size(), 5000u);
  EXPECT_EQ(seconds.back() - seconds.front(), 4999 * 1000);
  const RecurRule rare = parse_cron_schedule("0 0 29 2 0");  // Feb 29 or any Sunday in February
  const RecurRule leap_sunday = parse_cron_schedule("0 0 */28 2 */7");  // Feb 1 or 29, a Sunday
  query.after_ms = utc("2030-01-01T00:00:00Z");
  query.limit = 3;
  std::vector<std::string> found;
  for (const std::int64_t ms : next_instants(leap_sunday, TimeZone::utc(), query)) found.push_back(format_utc_iso(ms));
  EXPECT_EQ(found, (std::vector<std::string>{"2032-02-01T00:00:00.000Z", "2032-02-29T00:00:00.000Z",
                                             "2037-02-01T00:00:00.000Z"}));
  EXPECT_EQ(next_instants(rare, TimeZone::utc(), query).size(), 3u);
}

TEST(OccurrenceFormat, LinesAndJson) {
  const RecurRule rule = parse_cron_schedule("30 2 * * *");
  OccurrenceQuery query;
  query.after_ms = utc("2026-03-28T12:00:00Z");
  query.limit = 2;
  const std::vector<Occurrence> occurrences = next_occurrences(rule, TimeZone::find("Europe/Berlin"), query);
  EXPECT_EQ(occurrence_lines(occurrences),
            "2026-03-29T01:00:00.000Z 2026-03-29T03:00:00.000+02:00\n"
            "2026-03-30T00:30:00.000Z 2026-03-30T02:30:00.000+02:00\n");
  EXPECT_EQ(occurrences_json(occurrences).dump(),
            R"({"occurrences":[{"local":"2026-03-29T03:00:00.000+02:00","utc":"2026-03-29T01:00:00.000Z",)"
            R"("utc_ms":1774746000000},{"local":"2026-03-30T02:30:00.000+02:00","utc":"2026-03-30T00:30:00.000Z",)"
            R"("utc_ms":1774830600000}]})");
  EXPECT_EQ(occurrence_lines({}), "");
  EXPECT_EQ(occurrences_json({}).dump(), R"({"occurrences":[]})");
}

}  // namespace
}  // namespace expiry
