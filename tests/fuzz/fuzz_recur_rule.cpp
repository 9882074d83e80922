// Fuzz target for the recurring rules (src/recur/). The first line of the input is a rule, the
// second a time zone name, the third a time argument. Invariants:
// - parse_recur_rule either throws ConfigError or gives a rule whose canonical text reads back
//   to the same canonical text;
// - its next occurrences (at most 8, after a fixed instant) are strictly increasing, after that
//   instant, and their ISO texts read back (parse_time_arg) to the same instants;
// - TimeZone::find and parse_time_arg either throw ConfigError or succeed.
#include <string>

#include "base/duration_text.h"
#include "base/errors.h"
#include "fuzz_check.h"
#include "fuzz_targets.h"
#include "recur/occurrences.h"
#include "recur/recur_rule.h"
#include "recur/time_text.h"
#include "recur/time_zone.h"

namespace expiry::fuzz {
namespace {

constexpr std::int64_t kAfter = 1774746000000;  // 2026-03-29T01:00:00Z, a DST change in Europe

std::string_view line(std::string_view& rest) {
  const size_t nl = rest.find('\n');
  std::string_view head = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  return head;
}

}  // namespace

void fuzz_recur_rule(std::string_view input) {
  std::string_view rest = input;
  const std::string_view rule_text = line(rest);
  const std::string_view zone_text = line(rest);
  const std::string_view time_text = line(rest);
  TimeZone zone = TimeZone::utc();
  if (!zone_text.empty()) {
    try {
      zone = TimeZone::find(zone_text);
    } catch (const ConfigError&) {
      zone = TimeZone::utc();
    }
  }
  try {
    (void)parse_time_arg(time_text, zone);
  } catch (const ConfigError&) {
  }
  RecurRule rule = IntervalSchedule{std::chrono::milliseconds(1000), 0};
  try {
    rule = parse_recur_rule(rule_text, &parse_duration_ms, kAfter);
  } catch (const ConfigError&) {
    return;
  }
  const std::string canonical = canonical_text(rule);
  std::string again;
  try {
    again = canonical_text(parse_recur_rule(canonical, &parse_duration_ms, kAfter));
  } catch (const ConfigError& e) {
    invariant_failed("canonical text does not parse back", canonical + ": " + e.what());
  }
  require(again == canonical, "canonical text is not stable", canonical + " -> " + again);
  OccurrenceQuery query;
  query.after_ms = kAfter;
  query.limit = 8;
  std::int64_t previous = kAfter;
  for (const Occurrence& o : next_occurrences(rule, zone, query)) {
    require(o.utc_ms > previous, "occurrences are not strictly increasing", o.utc_iso);
    previous = o.utc_ms;
    require(parse_time_arg(o.utc_iso, zone) == o.utc_ms, "utc_iso does not read back", o.utc_iso);
    require(parse_time_arg(o.local_iso, zone) == o.utc_ms, "local_iso does not read back", o.local_iso);
  }
}

}  // namespace expiry::fuzz
