// See recur_plan.h.
#include "recur/recur_plan.h"

#include <algorithm>

#include "base/duration_text.h"
#include "recur/occurrences.h"
#include "recur/time_text.h"

namespace expiry {

namespace {
// A refill walks at most this many missed instants to find the latest (once): a per-second
// schedule missed for a day is 86,400.
constexpr std::size_t kMaxMissedWalk = 1000000;
constexpr std::size_t kMissedStep = 4096;
// The most instants one definition holds (RECUR_MAX_UPCOMING in occurrences.lua).
constexpr std::size_t kMaxListed = 256;
}  // namespace

RecurRule stored_recur_rule(const std::string& rule_text, std::optional<long long> start_ms) {
  return parse_recur_rule(rule_text, &parse_duration_ms, start_ms.value_or(0));
}

std::vector<RecurInstant> recur_instants(const RecurRule& rule, const TimeZone& zone, long long after_ms,
                                         std::optional<long long> start_ms, std::optional<long long> end_ms,
                                         std::size_t count) {
  OccurrenceQuery query;
  query.after_ms = after_ms;
  query.start_ms = start_ms;
  query.end_ms = end_ms;
  query.limit = count;
  std::vector<RecurInstant> out;
  for (std::int64_t ms : next_instants(rule, zone, query)) out.push_back({ms, format_local_iso(ms, zone)});
  return out;
}

std::vector<RecurInstant> refill_instants(const RecurRefillRow& row, long long now_ms, std::size_t count) {
  const TimeZone zone = TimeZone::find(row.tz);
  const RecurRule rule = stored_recur_rule(row.rule, row.start_ms);
  const long long from = row.horizon_ms.value_or(row.last_ms.value_or(now_ms - 1));
  if (row.armed || row.upcoming > 0) return recur_instants(rule, zone, from, row.start_ms, row.end_ms, count);
  // Starved: nothing armed, nothing listed. Missed = due more than grace_ms ago.
  const long long cutoff = now_ms - row.grace_ms;
  std::vector<RecurInstant> out;
  if (row.misfire != "skip" && from < cutoff - 1) {
    const std::size_t keep_all = std::min<std::size_t>(static_cast<std::size_t>(std::max(0LL, row.misfire_max)),
                                                       kMaxListed - count);
    std::optional<std::int64_t> latest;
    long long after = from;
    for (std::size_t walked = 0; walked < kMaxMissedWalk;) {
      OccurrenceQuery query{after, row.start_ms, std::min(row.end_ms.value_or(cutoff - 1), cutoff - 1), kMissedStep};
      const std::vector<std::int64_t> missed = next_instants(rule, zone, query);
      for (std::int64_t ms : missed) {
        if (row.misfire == "all" && out.size() < keep_all) out.push_back({ms, format_local_iso(ms, zone)});
        latest = ms;
      }
      walked += missed.size();
      if (missed.size() < kMissedStep || (row.misfire == "all" && out.size() >= keep_all)) break;
      after = missed.back();
    }
    if (row.misfire == "once" && latest) out.push_back({*latest, format_local_iso(*latest, zone)});
  }
  const long long next_from = std::max(from, cutoff - 1);
  for (auto& inst : recur_instants(rule, zone, next_from, row.start_ms, row.end_ms, count)) out.push_back(std::move(inst));
  return out;
}

}  // namespace expiry
