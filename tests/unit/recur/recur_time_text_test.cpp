// recur/time_text.h and recur/time_zone.h: ISO-8601 texts, the recur commands' time arguments,
// zone lookup.
#include <gtest/gtest.h>

#include <string>

#include "base/errors.h"
#include "recur/time_text.h"
#include "recur/time_zone.h"

namespace expiry {
namespace {

std::string error_of(const std::string& text, const char* zone) {
  try {
    parse_time_arg(text, TimeZone::find(zone));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ZoneLookup, FindsZonesOfTheSystemDatabase) {
  EXPECT_EQ(TimeZone::utc().name(), "UTC");
  EXPECT_EQ(TimeZone::find("Europe/Berlin").name(), "Europe/Berlin");
  EXPECT_EQ(TimeZone::find("Asia/Kathmandu").offset_at(1767225600).count(), 5 * 3600 + 45 * 60);
  EXPECT_EQ(TimeZone::find("Etc/GMT+5").offset_at(1767225600).count(), -5 * 3600);
  for (const char* bad : {"Mars/Olympus_Mons", "", "../../etc/passwd"}) {
    try {
      TimeZone::find(bad);
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.what(), "unknown time zone '" + std::string(bad) + "'");
    }
  }
}

// A misspelt zone gets the closest name of the database (issue 43); a refused name is never it.
TEST(ZoneLookup, AMisspeltZoneGetsADidYouMean) {
  const auto message = [](const char* name) -> std::string {
    try {
      TimeZone::find(name);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(found)";
  };
  EXPECT_EQ(message("Europe/Berln"), "unknown time zone 'Europe/Berln'; did you mean 'Europe/Berlin'?");
  EXPECT_EQ(message("europe/berlin"), "unknown time zone 'europe/berlin'; did you mean 'Europe/Berlin'?");
  EXPECT_EQ(message("America/NewYork"), "unknown time zone 'America/NewYork'; did you mean 'America/New_York'?");
  EXPECT_EQ(message("Asia/Kathmadu"), "unknown time zone 'Asia/Kathmadu'; did you mean 'Asia/Kathmandu'?");
  EXPECT_EQ(message("localtme").find("localtime"), std::string::npos) << message("localtme");
}

TEST(ZoneLookup, MapsLocalTimes) {
  const TimeZone berlin = TimeZone::find("Europe/Berlin");
  const LocalMapping gap = berlin.map_local(LocalSeconds{1774751400});  // 2026-03-29T02:30:00 local
  EXPECT_EQ(gap.kind, LocalMapping::Kind::Nonexistent);
  EXPECT_EQ(gap.transition_s, 1774746000);                           // 01:00:00Z
  EXPECT_EQ(gap.gap.count(), 3600);
  const LocalMapping twice = berlin.map_local(LocalSeconds{1792895400});  // 2026-10-25T02:30:00 local
  EXPECT_EQ(twice.kind, LocalMapping::Kind::Ambiguous);
  EXPECT_EQ(twice.earliest_s, 1792888200);                          // 00:30:00Z
  EXPECT_EQ(twice.latest_s, 1792891800);                            // 01:30:00Z
}

struct FormatCase {
  long long utc_ms;
  const char* zone;
  const char* utc_iso;
  const char* local_iso;
};

TEST(TimeText, FormatsUtcAndLocalWithOffset) {
  const FormatCase cases[] = {
      {1774746000000, "Europe/Berlin", "2026-03-29T01:00:00.000Z", "2026-03-29T03:00:00.000+02:00"},
      {1774745999999, "Europe/Berlin", "2026-03-29T00:59:59.999Z", "2026-03-29T01:59:59.999+01:00"},
      {1767225600000, "UTC", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000+00:00"},
      {1767225600000, "Asia/Kathmandu", "2026-01-01T00:00:00.000Z", "2026-01-01T05:45:00.000+05:45"},
      {1767225600000, "America/St_Johns", "2026-01-01T00:00:00.000Z", "2025-12-31T20:30:00.000-03:30"},
      {1767225600000, "Pacific/Kiritimati", "2026-01-01T00:00:00.000Z", "2026-01-01T14:00:00.000+14:00"},
      {0, "UTC", "1970-01-01T00:00:00.000Z", "1970-01-01T00:00:00.000+00:00"},
      {-1, "UTC", "1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999+00:00"},
      {kMaxIsoTimeMs, "UTC", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999+00:00"},
      {kMinIsoTimeMs, "UTC", "0000-01-01T00:00:00.000Z", "0000-01-01T00:00:00.000+00:00"},
  };
  for (const FormatCase& c : cases) {
    EXPECT_EQ(format_utc_iso(c.utc_ms), c.utc_iso) << c.utc_ms;
    EXPECT_EQ(format_local_iso(c.utc_ms, TimeZone::find(c.zone)), c.local_iso) << c.utc_ms << " " << c.zone;
  }
}

struct ParseCase {
  const char* text;
  const char* zone;
  long long utc_ms;
};

TEST(TimeText, ParsesTimeArguments) {
  const ParseCase cases[] = {
      {"1774746000000", "Europe/Berlin", 1774746000000},
      {"0", "UTC", 0},
      {"-1000", "UTC", -1000},
      {"2026-03-29T01:00:00Z", "Europe/Berlin", 1774746000000},
      {"2026-03-29t01:00:00.5z", "UTC", 1774746000500},
      {"2026-03-29T01:00:00.123Z", "UTC", 1774746000123},
      {"2026-03-29T01:00Z", "UTC", 1774746000000},
      {"2026-03-29 01:00:00Z", "UTC", 1774746000000},
      {"2026-03-29T03:00:00+02:00", "UTC", 1774746000000},
      {"2026-03-29T03:00:00+0200", "UTC", 1774746000000},
      {"2026-03-29T03:00:00+02", "UTC", 1774746000000},
      {"2026-03-28T20:00:00-05:00", "UTC", 1774746000000},
      {"2026-01-01T05:45:00+05:45", "UTC", 1767225600000},
      // Local time in the zone.
      {"2026-03-29T03:00:00", "Europe/Berlin", 1774746000000},
      {"2026-03-29T01:59:59.999", "Europe/Berlin", 1774745999999},
      {"2026-01-01T05:45", "Asia/Kathmandu", 1767225600000},
      {"2026-03-29T01:00:00", "UTC", 1774746000000},
      // Repeated by the fall back: the earlier instant.
      {"2026-10-25T02:30:00", "Europe/Berlin", 1792888200000},
      {"2026-11-01T01:30:00", "America/New_York", 1793511000000},
  };
  for (const ParseCase& c : cases) {
    EXPECT_EQ(parse_time_arg(c.text, TimeZone::find(c.zone)), c.utc_ms) << c.text << " in " << c.zone;
  }
}

TEST(TimeText, RejectsOtherTexts) {
  const std::string expected_forms =
      "' is neither epoch milliseconds nor an ISO-8601 date-time such as 2026-03-29T03:00:00, "
      "2026-03-29T01:00:00.000Z or 2026-03-29T03:00:00+02:00";
  for (const char* bad : {"", "now", "tomorrow", "1.5", "12ab", "2026-03-29", "2026-3-29T01:00:00Z",
                          "2026-03-29T1:00Z", "2026-03-29T01:00:00.Z", "2026-03-29T01:00:00.1234Z",
                          "2026-03-29T01:00:00+2:00", "2026-03-29T01:00:00+02:0", "2026-03-29T01:00:00ZZ",
                          "2026-03-29T01:00:00 +02:00", "2026-03-29T01:00:00+24:00", "--5", "1-2",
                          "99999999999999999999"}) {
    EXPECT_EQ(error_of(bad, "UTC"), "time '" + std::string(bad) + expected_forms) << bad;
  }
  EXPECT_EQ(error_of("2026-02-29T00:00:00Z", "UTC"), "time '2026-02-29T00:00:00Z' is not a valid date and time of day");
  EXPECT_EQ(error_of("2026-01-01T24:00:00Z", "UTC"), "time '2026-01-01T24:00:00Z' is not a valid date and time of day");
  EXPECT_EQ(error_of("2026-01-01T00:00:60Z", "UTC"), "time '2026-01-01T00:00:60Z' is not a valid date and time of day");
  EXPECT_EQ(error_of("2026-03-29T02:30:00", "Europe/Berlin"),
            "local time '2026-03-29T02:30:00' does not exist in Europe/Berlin (a daylight-saving change skips it)");
  EXPECT_EQ(error_of("0000-01-01T00:00:00+01:00", "UTC"),
            "time '0000-01-01T00:00:00+01:00' is outside the years 0000-9999");
  EXPECT_EQ(error_of("253402300800000", "UTC"), "time '253402300800000' is outside the years 0000-9999");
}

}  // namespace
}  // namespace expiry
