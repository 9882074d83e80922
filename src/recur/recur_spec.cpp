// See recur_spec.h.
#include "recur/recur_spec.h"

#include "base/duration_text.h"
#include "base/errors.h"
#include "base/text_escape.h"
#include "recur/time_text.h"

namespace expiry {

ParsedRecurRule parse_recur_rule_spec(const RecurRuleSpec& spec, long long anchor_ms, const RecurFieldNames& names) {
  const std::string cron = names.cron, every = names.every, tz = names.tz, start = names.start, end = names.end;
  if (spec.cron.has_value() == spec.every.has_value()) throw ConfigError("give exactly one of " + cron + " and " + every);
  if (auto err = time_zone_name_error(spec.tz)) throw ConfigError(tz + ": " + *err);
  TimeZone zone = TimeZone::find(spec.tz);
  std::optional<long long> start_ms, end_ms;
  if (spec.start) start_ms = parse_time_arg(*spec.start, zone);
  if (spec.end) end_ms = parse_time_arg(*spec.end, zone);
  if (start_ms && end_ms && *end_ms < *start_ms) throw ConfigError(end + " lies before " + start);
  std::string text;
  if (spec.cron) {
    text = *spec.cron;
  } else {
    if (auto err = interval_flag_error(*spec.every, spec.allow_sub_second)) throw ConfigError(every + ": " + *err);
    text = "@every " + *spec.every;
    if (!start_ms) start_ms = anchor_ms;
  }
  RecurRule rule = parse_recur_rule(text, &parse_duration_ms, start_ms.value_or(0));
  std::string canonical = canonical_text(rule);
  return {std::move(rule), std::move(zone), std::move(canonical), start_ms, end_ms};
}

std::vector<Occurrence> preview_recur_rule(const RecurRuleSpec& spec, long long from_ms, size_t count,
                                           const RecurFieldNames& names) {
  const ParsedRecurRule parsed = parse_recur_rule_spec(spec, from_ms, names);
  OccurrenceQuery query;
  query.after_ms = from_ms;
  query.start_ms = parsed.start_ms;
  query.end_ms = parsed.end_ms;
  query.limit = count;
  return next_occurrences(parsed.rule, parsed.zone, query);
}

std::optional<std::string> recur_misfire_error(const std::string& misfire) {
  if (misfire == "skip" || misfire == "once" || misfire == "all") return std::nullopt;
  return "the misfire policy must be skip, once or all; got '" + escape_text(misfire) + "'";
}

}  // namespace expiry
