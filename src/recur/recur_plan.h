// Which instants of a recurring schedule its writers and the relays store (src/lua/expiry/
// occurrences.lua): the next ones for `recur set` and `recur resume`, and a relay's refill of a
// schedule whose list runs low, where a schedule left with no instant at all (every relay was
// down for longer than its list lasted) gets the missed ones its misfire policy fires. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "functions/recur_calls.h"
#include "recur/recur_rule.h"
#include "recur/time_zone.h"

namespace expiry {

// Instants written per set, resume or refill: a list lasts this many occurrences, and a refill
// is asked for when fewer than 8 are left (RECUR_LOW).
constexpr std::size_t kRecurInstantsPerWrite = 32;

// The rule a definition stores: its text (canonical_text) read back, an interval anchored at
// start_ms (its first occurrence; 0 when absent). Throws ConfigError for text no writer stores.
RecurRule stored_recur_rule(const std::string& rule_text, std::optional<long long> start_ms);

// Up to `count` instants strictly after after_ms, within the start and end bounds, with their
// local texts.
std::vector<RecurInstant> recur_instants(const RecurRule& rule, const TimeZone& zone, long long after_ms,
                                         std::optional<long long> start_ms, std::optional<long long> end_ms,
                                         std::size_t count = kRecurInstantsPerWrite);

// What a relay sends in expiry_v2_recur_refill for `row` at Redis time now_ms: the instants after
// the schedule's horizon. When nothing is armed and none is listed, the instants missed by more
// than grace_ms first, as its policy fires them (all: up to misfire_max of the earliest; once:
// the latest; skip: none), then the next ones from now - grace_ms on. Empty when the rule has no
// instant after the horizon (it ended). Throws ConfigError when the stored rule or zone does not
// read back (a definition written by hand).
std::vector<RecurInstant> refill_instants(const RecurRefillRow& row, long long now_ms,
                                          std::size_t count = kRecurInstantsPerWrite);

}  // namespace expiry
