// The Producer's recurring-schedule calls (producer.h, recurring.h): the public values
// translated to and from RecurringSchedules (recurring_schedules.h), which expiry-ctl recur and
// expiry-api's /v1/schedules use too, so that every face checks and writes a schedule alike.
#include <string>

#include "base/errors.h"
#include "producer/producer.h"
#include "producer/recurring_schedules.h"
#include "recur/recur_spec.h"

namespace expiry {
namespace {

// The ranges `expiry-ctl recur set` checks its flags against.
constexpr long long kMaxMisfireGraceMs = 86400000;
constexpr long long kMaxMisfireMax = 100000;
constexpr int kMaxNextCount = 1000;  // as GET /v1/schedules/{id}/preview?count

const char* misfire_text(MisfirePolicy policy) {
  switch (policy) {
    case MisfirePolicy::Skip: return "skip";
    case MisfirePolicy::All: return "all";
    case MisfirePolicy::Once: break;
  }
  return "once";
}

MisfirePolicy misfire_policy(const std::string& text) {
  if (text == "skip") return MisfirePolicy::Skip;
  if (text == "all") return MisfirePolicy::All;
  return MisfirePolicy::Once;  // "once", and the library's default when absent
}

void check_next_count(int next_count) {
  if (next_count < 0 || next_count > kMaxNextCount) {
    throw ConfigError("next_count must be 0.." + std::to_string(kMaxNextCount));
  }
}

RecurringWrite write_of(const RecurringSpec& spec) {
  if (spec.misfire_grace_ms < 0 || spec.misfire_grace_ms > kMaxMisfireGraceMs) {
    throw ConfigError("misfire_grace_ms must be 0.." + std::to_string(kMaxMisfireGraceMs));
  }
  if (spec.misfire_max < 1 || spec.misfire_max > kMaxMisfireMax) {
    throw ConfigError("misfire_max must be 1.." + std::to_string(kMaxMisfireMax));
  }
  if (spec.max_late_ms && *spec.max_late_ms < 0) throw ConfigError("max_late_ms must be 0 or more");
  RecurringWrite w;
  w.rule.cron = spec.cron;
  w.rule.every = spec.every;
  w.rule.tz = spec.tz;
  w.rule.start = spec.start;
  w.rule.end = spec.end;
  w.rule.allow_sub_second = spec.allow_sub_second;
  w.payload = spec.payload;
  w.stream = spec.stream;
  w.webhook = spec.webhook;
  w.misfire = misfire_text(spec.misfire);
  w.misfire_grace_ms = spec.misfire_grace_ms;
  w.misfire_max = spec.misfire_max;
  w.max_late_ms = spec.max_late_ms;
  return w;
}

std::optional<long long> armed(long long armed_ms) {
  return armed_ms >= 0 ? std::optional<long long>(armed_ms) : std::nullopt;
}

RecurringDetails details_of(const RecurringSchedule& s) {
  RecurringDetails d;
  d.id = s.id;
  d.rule = s.field("rule");
  d.tz = s.field("tz");
  d.start_ms = s.number("start_ms");
  d.end_ms = s.number("end_ms");
  d.payload = s.field("payload");
  d.stream = s.field("stream");
  d.webhook = s.field("webhook");
  d.misfire = misfire_policy(s.field("misfire"));
  d.misfire_grace_ms = s.number("grace_ms").value_or(d.misfire_grace_ms);
  d.misfire_max = s.number("misfire_max").value_or(d.misfire_max);
  d.max_late_ms = s.number("max_late_ms");
  d.paused = s.paused();
  d.ended = s.field("ended") == "1";
  d.fired = s.number("fired").value_or(0);
  d.skipped = s.number("skipped").value_or(0);
  d.last_ms = s.number("last_ms");
  d.armed_ms = s.number("armed_ms");
  d.version = s.number("version").value_or(0);
  d.created_ms = s.number("created_ms");
  d.next.reserve(s.next.size());
  for (const Occurrence& o : s.next) d.next.push_back({o.utc_ms, o.utc_iso, o.local_iso});
  return d;
}

}  // namespace

RecurringSetResult Producer::set_recurring(const RecurringSpec& spec) {
  const RecurringWrite write = write_of(spec);
  const RecurringSetOutcome out = RecurringSchedules(client(), placement()).set(spec.id, write, kRecurJsonNames);
  return {out.result.replaced, out.result.version, out.rule_text, out.zone.name(), armed(out.result.armed_ms)};
}

std::optional<RecurringDetails> Producer::show_recurring(const std::string& id, int next_count) {
  check_next_count(next_count);
  const auto schedule = RecurringSchedules(client(), placement()).get(id, next_count);
  if (!schedule) return std::nullopt;
  return details_of(*schedule);
}

bool Producer::delete_recurring(const std::string& id) {
  return RecurringSchedules(client(), placement()).remove(id);
}

RecurringStateResult Producer::pause_recurring(const std::string& id) {
  const RecurStateResult r = RecurringSchedules(client(), placement()).pause(id);
  return {r.exists, r.changed, std::nullopt};
}

RecurringStateResult Producer::resume_recurring(const std::string& id) {
  const RecurringResumeOutcome r = RecurringSchedules(client(), placement()).resume(id);
  return {r.state.exists, r.state.changed, armed(r.state.armed_ms)};
}

void Producer::for_each_recurring(const std::function<bool(const RecurringDetails&)>& visit, int next_count) {
  check_next_count(next_count);
  RecurringSchedules(client(), placement()).for_each(
      [&](const RecurringSchedule& s) { return visit(details_of(s)); }, next_count);
}

}  // namespace expiry
