// The search for a cron schedule's next match in civil (wall-clock) time, field by field:
// month, then day, then hour, minute and second, so a rule that fires rarely (Feb 29) or every
// second costs a few hundred steps per year searched, never one per second. Internal to
// expiry_recur: occurrences.cpp maps what it finds to instants, cron_schedule.cpp rejects
// schedules that never fire. Pure.
#pragma once

#include <optional>

#include "recur/cron_schedule.h"
#include "recur/time_zone.h"

namespace expiry {

// How far ahead a search may look: a whole 400-year Gregorian cycle, so a schedule that finds
// nothing in it never fires (Feb 29 on a Sunday waits up to 40 years around 2100).
constexpr int kCivilSearchYears = 400;

// The first local time t with from <= t < limit whose fields all match, or nullopt.
std::optional<LocalSeconds> next_civil_match(const CronSchedule& schedule, LocalSeconds from, LocalSeconds limit);

// from plus kCivilSearchYears years (as 146097 days: 400 Gregorian years exactly).
LocalSeconds civil_search_limit(LocalSeconds from);

}  // namespace expiry
