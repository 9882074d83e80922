// A recurring schedule's rule as a user gives it, the same for `expiry-ctl recur set|preview`
// and for PUT /v1/schedules/{id} and the preview routes: exactly one of a cron expression and an
// interval, a zone, and optional start and end times; read into a rule and its bounds, or a
// ConfigError that names the field as that face calls it. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "recur/occurrences.h"
#include "recur/recur_rule.h"
#include "recur/time_zone.h"

namespace expiry {

struct RecurRuleSpec {
  std::optional<std::string> cron;
  std::optional<std::string> every;  // an interval with a unit (30s, 15m, 2h ...)
  std::string tz = "UTC";
  std::optional<std::string> start;  // a time (recur/time_text.h parse_time_arg), in tz
  std::optional<std::string> end;
  bool allow_sub_second = false;     // an `every` below 1 s is refused without it
};

// How a face names the fields in its messages.
struct RecurFieldNames {
  const char* cron;
  const char* every;
  const char* tz;
  const char* start;
  const char* end;
};
inline constexpr RecurFieldNames kRecurFlagNames{"--cron", "--every", "--tz", "--start", "--end"};
inline constexpr RecurFieldNames kRecurJsonNames{"cron", "every", "tz", "start", "end"};

struct ParsedRecurRule {
  RecurRule rule;
  TimeZone zone;
  std::string text;  // canonical_text(rule): what a definition stores
  std::optional<long long> start_ms;
  std::optional<long long> end_ms;
};

// The rule of `spec`. An interval is anchored at its start, else at `anchor_ms` (which becomes
// its start). Throws ConfigError.
ParsedRecurRule parse_recur_rule_spec(const RecurRuleSpec& spec, long long anchor_ms, const RecurFieldNames& names);

// The first `count` occurrences of `spec` after `from_ms` (an interval without a start is anchored
// there, its first occurrence one period later). Throws ConfigError.
std::vector<Occurrence> preview_recur_rule(const RecurRuleSpec& spec, long long from_ms, size_t count,
                                           const RecurFieldNames& names);

// The misfire policies a definition takes: nullopt for skip, once and all, else why not.
std::optional<std::string> recur_misfire_error(const std::string& misfire);

}  // namespace expiry
