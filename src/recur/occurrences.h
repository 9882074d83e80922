// The next occurrences of a recurring rule in a time zone, with the daylight-saving semantics of
// Vixie cron and cronie. Pure: the clock is the caller's (after_ms).
//
// Cron schedules match local (wall-clock) time in the zone:
// - A fixed-time schedule (CronSchedule::fixed_time: one value in each of the minute and hour
//   fields, and in the seconds field when there is one) fires once per local day. When a
//   forward transition skips its time, it fires at the first instant after the gap (02:30 in
//   Europe/Berlin on 2026-03-29 fires at 03:00+02:00), unless the gap is longer than 3 hours
//   (Vixie cron's limit for catching up: Pacific/Apia skipping 2011-12-30 is a change of date, and
//   the day's jobs are not run). When a backward transition repeats its time, it fires once, at
//   the earlier (still daylight-saving) instant.
// - Any other schedule (a '*', range, list or step in the minute or hour field) follows real
//   time: its local times in a repeated hour occur twice (both instants), those in a skipped
//   hour never.
// Interval schedules are UTC: anchor_ms + k * period, whatever the zone.
// Occurrences are whole seconds for cron schedules and strictly increasing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recur/recur_rule.h"
#include "recur/time_zone.h"

namespace expiry {

struct OccurrenceQuery {
  std::int64_t after_ms = 0;               // only occurrences strictly after this UTC epoch ms
  std::optional<std::int64_t> start_ms;    // none before it (an occurrence at start_ms counts)
  std::optional<std::int64_t> end_ms;      // none after it (an occurrence at end_ms counts)
  std::size_t limit = 10;                  // at most this many
};

struct Occurrence {
  std::int64_t utc_ms;                     // UTC epoch milliseconds
  std::string utc_iso;                     // format_utc_iso: "2026-03-29T01:00:00.000Z"
  std::string local_iso;                   // format_local_iso: "2026-03-29T03:00:00.000+02:00"
};

// The instants alone, in increasing order: fewer than query.limit when end_ms, the year 9999 or
// (for cron schedules) a 400-year search finds no more.
std::vector<std::int64_t> next_instants(const RecurRule& rule, const TimeZone& zone, const OccurrenceQuery& query);

// next_instants with their ISO texts.
std::vector<Occurrence> next_occurrences(const RecurRule& rule, const TimeZone& zone, const OccurrenceQuery& query);

}  // namespace expiry
