// A recurring rule: a cron schedule in a time zone, or a fixed interval anchored at an instant.
// What the rule text says, classified and printed back in canonical form. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "recur/cron_schedule.h"

namespace expiry {

// Occurrences at anchor_ms + k * period for k = 0, 1, 2, ... in UTC: the time zone only changes
// how they are shown, never when they fall.
struct IntervalSchedule {
  std::chrono::milliseconds period;  // > 0
  std::int64_t anchor_ms = 0;        // UTC epoch ms of the first occurrence
};

using RecurRule = std::variant<CronSchedule, IntervalSchedule>;

// Reads a period such as "15m" (milliseconds, or nullopt when the text is not a period).
// expiry-ctl passes parse_duration_ms (base/duration_text.h), whose syntax the canonical text uses.
using PeriodParser = std::optional<long long> (*)(std::string_view text);

// Classifies rule text: "@every PERIOD" (any case, PERIOD read by parse_period) is an interval
// anchored at anchor_ms; anything else is a cron expression (parse_cron_schedule). Throws
// ConfigError with a message naming the fault: the cron parser's, or "every: 'X' is not a period
// such as 30s, 15m or 2h".
RecurRule parse_recur_rule(std::string_view text, PeriodParser parse_period, std::int64_t anchor_ms);

// What is wrong with `period` as a user's interval (expiry-ctl recur --every), or nullopt: it
// must carry a unit (a bare number would silently mean milliseconds), and be at least 1 s unless
// `allow_sub_second` (one schedule at 1 ms adds 1,000 entries a second). Stored rules are not
// checked again: parse_recur_rule reads any period.
std::optional<std::string> interval_flag_error(std::string_view period, bool allow_sub_second);

// The rule as canonical text: an interval as "@every " and its period in the largest of the
// units h, m, s, ms that divides it ("@every 90m", "@every 1500ms"); a cron schedule as
// CronSchedule::text. parse_recur_rule reads it back to the same rule.
std::string canonical_text(const RecurRule& rule);

// The rule for messages: "cron '30 2 * * *' (fixed time: once per local day)",
// "cron '*/15 * * * *'", "interval '@every 15m' from 2026-03-29T00:00:00.000Z".
std::string describe(const RecurRule& rule);

}  // namespace expiry
