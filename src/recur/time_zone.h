// An IANA time zone ("UTC", "Europe/Berlin") from the system's tzdata, and what the recurring
// rules need of it: the offset in force at an instant and the instants a local time names. Pure
// apart from reading /usr/share/zoneinfo once (date/tz with USE_OS_TZDB: nothing is downloaded).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace date {
class time_zone;
}

namespace expiry {

// Seconds since 1970-01-01T00:00:00 of a civil (wall-clock) time in some zone, as if that zone
// were UTC: the local counterpart of a UTC epoch. Calendar arithmetic works on it unchanged.
using LocalSeconds = std::chrono::seconds;

// The zone's rule in force over [begin_s, end_s) (UTC epoch seconds): local = utc + offset.
struct ZoneSpan {
  std::int64_t begin_s;
  std::int64_t end_s;                // the next transition, or far in the future
  std::chrono::seconds offset;
};

// How a local time maps to instants, as date::local_info does.
struct LocalMapping {
  enum class Kind {
    Unique,       // one instant: earliest_s
    Nonexistent,  // skipped by a forward transition at transition_s, which moved the clock by gap
    Ambiguous,    // two instants (a backward transition): earliest_s, then latest_s
  };
  Kind kind;
  std::int64_t earliest_s = 0;       // Unique, Ambiguous
  std::int64_t latest_s = 0;         // Ambiguous
  std::int64_t transition_s = 0;     // Nonexistent: the first instant after the gap
  std::chrono::seconds gap{0};       // Nonexistent: how far the clock jumped forward
};

// A zone of the tz database. Cheap to copy; the database lives as long as the process.
// Limit: date/tz's reader of the system's TZif files (3.0.1 in Debian 12) uses their transitions
// only, not the rule in their footer, and Debian's files list transitions up to 2037: after a
// zone's last listed transition its last offset holds (Europe/Berlin stays at +01:00 in 2040).
// What is wrong with `name` as a rule's time zone, or nullopt: names that do not name one place
// the same on every machine are refused: "localtime" (each machine's /etc/localtime),
// "posixrules", "Factory", and the "posix/" and "right/" trees of the system's zoneinfo (the
// latter counts leap seconds). Pure; TimeZone::find then checks the database holds the name.
std::optional<std::string> time_zone_name_error(std::string_view name);

class TimeZone {
 public:
  // "UTC" (the default zone of the recurring rules).
  static TimeZone utc();

  // Throws ConfigError "unknown time zone 'X'" for a name the tz database does not hold (with
  // "; did you mean 'Y'?" when one of its names is close: base/did_you_mean.h), and a
  // ConfigError naming tzdata when the database cannot be read at all.
  static TimeZone find(std::string_view name);

  // The name as the database spells it (a link such as "US/Eastern" keeps its own name).
  const std::string& name() const { return name_; }

  ZoneSpan span_at(std::int64_t utc_s) const;
  std::chrono::seconds offset_at(std::int64_t utc_s) const { return span_at(utc_s).offset; }
  LocalMapping map_local(LocalSeconds local) const;

 private:
  TimeZone(const date::time_zone* zone, std::string name) : zone_(zone), name_(std::move(name)) {}

  const date::time_zone* zone_;      // owned by date's database, never freed
  std::string name_;
};

}  // namespace expiry
