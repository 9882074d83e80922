// Recurring schedules as the installed Producer writes and reads them (Producer::set_recurring
// and the calls beside it in producer.h; docs/protocol.md "Recurring schedules"): a cron
// expression or an interval in an IANA time zone, each occurrence forwarded exactly once as a
// stream entry named by the schedule's id. Plain values; standard headers only (installed).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace expiry {

// What an occurrence claimed more than misfire_grace_ms after its time does (every relay was
// down, or its bucket paused): Skip drops it, Once fires one catch-up (the latest missed), All
// fires every missed one, at most misfire_max in a row.
enum class MisfirePolicy { Skip, Once, All };

// A recurring schedule as Producer::set_recurring writes it. The members are named as the flags
// of `expiry-ctl recur set` and the fields of PUT /v1/schedules/{id}, and the errors name them so.
struct RecurringSpec {
  std::string id;                        // 1..200 bytes of UTF-8, no control characters
  // The rule: exactly one of cron and every.
  std::optional<std::string> cron;       // 5 fields (minute first) or 6 (seconds first), or @hourly,
                                         // @daily, @weekly, @monthly, @yearly; matched in tz
  std::optional<std::string> every;      // an interval with a unit ("30s", "15m", "2h"), anchored at start
  bool allow_sub_second = false;         // accept an `every` below 1 s
  std::string tz = "UTC";                // IANA time zone name ("Europe/Berlin")
  std::optional<std::string> start;      // no occurrence before it: epoch ms, ISO-8601 with Z or an
                                         // offset, or a local time in tz (default for every: now)
  std::optional<std::string> end;        // no occurrence after it (the same forms)
  std::string payload;                   // of every occurrence
  std::string stream;                    // empty: the relay's default stream
  std::string webhook;                   // an expiry-webhook endpoint name; empty: none
  MisfirePolicy misfire = MisfirePolicy::Once;
  long long misfire_grace_ms = 1000;     // 0..86400000: later than this after its time is missed
  long long misfire_max = 100;           // 1..100000: catch-ups in a row at most (All)
  std::optional<long long> max_late_ms;  // lateness limit per occurrence (later: dead letter); unset: the relay's
};

// One occurrence: its instant and how it reads in UTC and in the schedule's zone.
struct RecurringOccurrence {
  long long utc_ms = 0;                  // UTC epoch milliseconds
  std::string utc;                       // "2026-03-29T01:00:00.000Z"
  std::string local;                     // "2026-03-29T03:00:00.000+02:00"
};

struct RecurringSetResult {
  bool replaced = false;                 // a schedule of this id existed (its pause and counts are kept)
  long long version = 0;                 // of the definition: 1 when created
  std::string rule;                      // as stored: the cron expression, or "@every <period>"
  std::string tz;                        // the zone as the tz database spells it
  std::optional<long long> armed_ms;     // the next occurrence (task `id`), unset when none is armed
};

// A stored schedule with its next occurrences.
struct RecurringDetails {
  std::string id;
  std::string rule;                      // as stored (RecurringSetResult::rule)
  std::string tz;
  std::optional<long long> start_ms;
  std::optional<long long> end_ms;
  std::string payload;
  std::string stream;                    // empty: the relay's default stream
  std::string webhook;                   // empty: none
  MisfirePolicy misfire = MisfirePolicy::Once;
  long long misfire_grace_ms = 1000;
  long long misfire_max = 100;
  std::optional<long long> max_late_ms;
  bool paused = false;
  bool ended = false;                    // the rule has no occurrence left (its end passed)
  long long fired = 0;                   // occurrences forwarded
  long long skipped = 0;                 // occurrences missed and not fired (misfire)
  std::optional<long long> last_ms;      // the last occurrence fired or skipped
  std::optional<long long> armed_ms;     // the pending occurrence (task `id`), unset when none
  long long version = 0;
  std::optional<long long> created_ms;   // Redis clock, kept by a replacement
  std::vector<RecurringOccurrence> next; // from the armed one on; empty when paused or ended
};

// Pause and resume: whether the schedule exists and whether the call changed it.
struct RecurringStateResult {
  bool exists = false;
  bool changed = false;                  // false: it was already paused (pause), or not paused (resume)
  std::optional<long long> armed_ms;     // resume: the next occurrence armed; pause: unset
};

}  // namespace expiry
