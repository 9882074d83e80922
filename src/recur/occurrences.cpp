// See occurrences.h.
#include "recur/occurrences.h"

#include <algorithm>
#include <limits>

#include "recur/civil_search.h"
#include "recur/time_text.h"

namespace expiry {
namespace {

using std::chrono::seconds;

constexpr std::int64_t kMaxTimeS = kMaxIsoTimeMs / 1000;
// The longest forward jump that fixed-time jobs catch up on, as in Vixie cron: a longer one is a
// change of date (Pacific/Apia, 2011-12-30), and the skipped times do not fire.
constexpr seconds kMaxCatchUpGap{3 * 3600};

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The query as one half-open condition: after_ms < t <= end_ms.
struct Window {
  std::int64_t after_ms;
  std::int64_t end_ms;
  std::size_t limit;
};

Window window_of(const OccurrenceQuery& query) {
  Window window{query.after_ms, kMaxIsoTimeMs, query.limit};
  if (query.start_ms && *query.start_ms - 1 > window.after_ms) window.after_ms = *query.start_ms - 1;
  if (query.end_ms) window.end_ms = std::min(*query.end_ms, kMaxIsoTimeMs);
  return window;
}

void interval_instants(const IntervalSchedule& rule, const Window& window, std::vector<std::int64_t>& out) {
  const std::int64_t period = rule.period.count();
  if (period <= 0 || rule.anchor_ms > window.end_ms) return;
  std::int64_t next = rule.anchor_ms;
  if (window.after_ms >= rule.anchor_ms) {
    const std::int64_t steps = (window.after_ms - rule.anchor_ms) / period + 1;
    if (steps > (window.end_ms - rule.anchor_ms) / period) return;
    next = rule.anchor_ms + steps * period;
  }
  while (out.size() < window.limit) {
    out.push_back(next);
    if (next > window.end_ms - period) return;
    next += period;
  }
}

// Real time: walk the zone's spans (stretches of one UTC offset) and search each one's local times.
// A local time repeated by a backward transition lies in two spans, one skipped in none.
void real_time_instants(const CronSchedule& rule, const TimeZone& zone, const Window& window,
                        std::vector<std::int64_t>& out) {
  const std::int64_t end_s = floor_div(window.end_ms, 1000);
  std::int64_t cursor_s = floor_div(window.after_ms, 1000) + 1;  // whole seconds after after_ms
  while (out.size() < window.limit && cursor_s <= end_s) {
    const ZoneSpan span = zone.span_at(cursor_s);
    const std::int64_t span_last_s = std::min(span.end_s - 1, end_s);
    const std::int64_t offset = span.offset.count();
    const std::optional<LocalSeconds> found =
        next_civil_match(rule, LocalSeconds{cursor_s + offset}, LocalSeconds{span_last_s + 1 + offset});
    if (found) {
      const std::int64_t utc_s = found->count() - offset;
      out.push_back(utc_s * 1000);
      cursor_s = utc_s + 1;
    } else {
      cursor_s = span_last_s + 1;
    }
  }
}

// Fixed time: one local time per matching day, mapped to the earlier instant when repeated and to
// the end of a gap (up to kMaxCatchUpGap) when skipped.
void fixed_time_instants(const CronSchedule& rule, const TimeZone& zone, const Window& window,
                         std::vector<std::int64_t>& out) {
  const std::int64_t after_s = floor_div(window.after_ms, 1000);
  // Two local days back: no zone's offset has moved by more than a day, so nothing that maps
  // after after_ms is missed.
  const std::int64_t local_after = after_s + zone.offset_at(after_s).count();
  LocalSeconds from{(floor_div(local_after, 86400) - 2) * 86400};
  const LocalSeconds limit{kMaxTimeS + 2 * 86400};
  std::int64_t last_ms = std::numeric_limits<std::int64_t>::min();
  while (out.size() < window.limit) {
    const std::optional<LocalSeconds> found = next_civil_match(rule, from, limit);
    if (!found) return;
    from = *found + seconds{1};
    const LocalMapping mapping = zone.map_local(*found);
    std::int64_t utc_s = mapping.earliest_s;
    if (mapping.kind == LocalMapping::Kind::Nonexistent) {
      if (mapping.gap > kMaxCatchUpGap) continue;
      utc_s = mapping.transition_s;
    }
    const std::int64_t utc_ms = utc_s * 1000;
    if (utc_ms > window.end_ms) return;
    if (utc_ms <= window.after_ms || utc_ms <= last_ms) continue;  // e.g. a catch-up at a gap's end
    out.push_back(utc_ms);
    last_ms = utc_ms;
  }
}

}  // namespace

std::vector<std::int64_t> next_instants(const RecurRule& rule, const TimeZone& zone, const OccurrenceQuery& query) {
  const Window window = window_of(query);
  std::vector<std::int64_t> out;
  if (window.limit == 0 || window.after_ms >= window.end_ms) return out;
  if (const auto* interval = std::get_if<IntervalSchedule>(&rule)) {
    interval_instants(*interval, window, out);
  } else {
    const CronSchedule& cron = std::get<CronSchedule>(rule);
    if (cron.fixed_time) {
      fixed_time_instants(cron, zone, window, out);
    } else {
      real_time_instants(cron, zone, window, out);
    }
  }
  return out;
}

std::vector<Occurrence> next_occurrences(const RecurRule& rule, const TimeZone& zone, const OccurrenceQuery& query) {
  std::vector<Occurrence> out;
  for (const std::int64_t ms : next_instants(rule, zone, query)) {
    out.push_back(Occurrence{ms, format_utc_iso(ms), format_local_iso(ms, zone)});
  }
  return out;
}

}  // namespace expiry
