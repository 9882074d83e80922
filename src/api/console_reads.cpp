// See console_reads.h.
#include "api/console_reads.h"

#include <cmath>

#include "api/task_json.h"
#include "inspector/dead_letter_refs.h"
#include "inspector/inspector.h"
#include "producer/producer.h"
#include "producer/task_placement.h"

namespace expiry {
namespace {

using json = nlohmann::json;

json nullable(const std::optional<long long>& v) { return v ? json(*v) : json(); }
json nullable(const std::optional<std::string>& v) { return v ? json(*v) : json(); }

// An entry's fields as an object (a repeated name: the last value).
json fields_json(const EntryFields& fields) {
  json out = json::object();
  for (const auto& [k, v] : fields) out[k] = v;
  return out;
}

json bucket_json(const BucketStats& b) {
  const bool paused = b.paused_until.has_value();
  return {{"bucket", b.bucket},
          {"pending", b.pending},
          {"overdue", b.overdue},
          {"next_due_ms", nullable(b.next_due_ms)},
          {"paused", b.pause_known ? json(paused) : json()},  // null: the user may not read the flag
          {"paused_until_ms", b.pause_known && paused ? json(*b.paused_until) : json()}};
}

json activity_json(const std::optional<ActivitySample>& a) {
  if (!a) return nullptr;
  return {{"window_ms", a->window_ms},
          {"sampled", a->sampled},
          {"capped", a->capped},
          {"forwarded_per_second", std::round(a->forwarded_per_second * 100.0) / 100.0},
          {"lateness_p50_ms", nullable(a->lateness_p50_ms)},
          {"lateness_p99_ms", nullable(a->lateness_p99_ms)}};
}

json groups_json(const std::optional<std::vector<ConsumerGroupInfo>>& groups) {
  if (!groups) return nullptr;
  json out = json::array();
  for (const ConsumerGroupInfo& g : *groups) {
    json consumers = json::array();
    for (const ConsumerInfo& c : g.consumers) {
      consumers.push_back({{"name", c.name}, {"pending", c.pending}, {"idle_ms", c.idle_ms}});
    }
    out.push_back({{"name", g.name},
                   {"streams", g.streams},
                   {"pending", g.pending},
                   {"lag", nullable(g.lag)},
                   {"consumer_count", g.consumer_count},
                   {"consumers", consumers}});
  }
  return out;
}

const char* delivery_state(GroupDelivery::State s) {
  switch (s) {
    case GroupDelivery::State::Acknowledged:
      return "acknowledged";
    case GroupDelivery::State::Delivered:
      return "delivered";
    case GroupDelivery::State::Unread:
      return "unread";
    case GroupDelivery::State::Unknown:
      break;
  }
  return nullptr;
}

json fired_json(const FiredEntry& f) {
  json groups = nullptr;
  if (f.groups) {
    groups = json::array();
    for (const GroupDelivery& g : *f.groups) {
      const char* state = delivery_state(g.state);
      const bool delivered = g.state == GroupDelivery::State::Delivered;
      groups.push_back({{"group", g.group},
                        {"state", state ? json(state) : json()},
                        {"consumer", delivered ? json(g.consumer) : json()},
                        {"deliveries", nullable(g.deliveries)}});
    }
  }
  return {{"stream", f.stream},
          {"entry_id", f.entry_id},
          {"due_ms", nullable(f.due_ms)},
          {"fired_ms", nullable(f.fired_ms)},
          {"fields", fields_json(f.fields)},
          {"groups", groups}};
}

}  // namespace

json read_overview(Producer& producer, const std::string& dead_stream) {
  const Overview o = Inspector(producer, dead_stream).overview();
  const NamespaceStats& stats = o.stats;
  json per_bucket = json::array();
  for (const BucketStats& b : stats.buckets) per_bucket.push_back(bucket_json(b));
  json relays = nullptr;
  if (o.relays) relays = {{"count", o.relays->count}, {"instances", o.relays->instances}};
  const TaskPlacement& layout = producer.placement();
  return {{"now_ms", stats.now_ms},
          {"namespace", layout.ns},
          {"cluster", layout.cluster},
          {"buckets", layout.buckets},
          {"pending", stats.pending},
          {"overdue", stats.overdue},
          {"next_due_ms", nullable(stats.next_due_ms)},
          {"paused_buckets", stats.paused_buckets},
          {"per_bucket", per_bucket},
          {"activity", activity_json(o.activity)},
          {"dead", {{"total", o.dead.total}, {"scanned", o.dead.scanned}, {"by_reason", o.dead.by_reason}}},
          {"groups", groups_json(o.groups)},
          {"relays", relays}};
}

json read_timeline(Producer& producer) {
  const Timeline t = Inspector(producer).timeline();
  json ranges = json::array();
  for (const TimelineBars& r : t.ranges) ranges.push_back({{"name", r.name}, {"step_ms", r.step_ms}, {"counts", r.counts}});
  return {{"now_ms", t.now_ms}, {"overdue", t.overdue}, {"beyond", t.beyond}, {"horizon_ms", t.horizon_ms}, {"ranges", ranges}};
}

json read_recurring(Producer& producer, long long limit) {
  const RecurringSummaries found = Inspector(producer).recurring_summaries(limit);
  json schedules = json::array();
  for (const RecurringSummary& s : found.schedules) {
    schedules.push_back({{"id", s.id},
                         {"rule", nullable(s.rule)},
                         {"tz", nullable(s.tz)},
                         {"misfire", nullable(s.misfire)},
                         {"paused", s.paused},
                         {"ended", s.ended},
                         {"next_ms", nullable(s.next_ms)},
                         {"next_local", nullable(s.next_local)},
                         {"last_ms", nullable(s.last_ms)},
                         {"fired", nullable(s.fired)},
                         {"skipped", nullable(s.skipped)}});
  }
  return {{"schedules", schedules}, {"count", schedules.size()}, {"more", found.more}};
}

json read_task_state(Producer& producer, const std::string& dead_stream, const std::string& id) {
  Inspector inspector(producer, dead_stream);
  const TaskState s = inspector.task_state(id);
  json out = {{"id", id}, {"state", "unknown"}, {"task", nullptr}, {"fired", nullptr}, {"dead", nullptr}};
  if (s.state == TaskState::State::Pending) {
    out["state"] = "pending";
    out["task"] = task_details_json(id, s.task);
    return out;
  }
  out["stream"] = s.stream;
  out["dead_stream"] = s.dead_stream;
  out["scanned"] = {{"stream", s.scanned_stream}, {"dead", s.scanned_dead}};
  if (s.fired) {
    out["fired"] = fired_json(*s.fired);
    out["state"] = "fired";
  }
  if (s.dead) {
    const DeadEntry& d = *s.dead;
    out["dead"] = {{"entry", format_dead_ref(inspector.dead_streams(), d.ref)},
                   {"stream", d.stream},
                   {"entry_id", d.entry_id},
                   {"when_ms", nullable(d.when_ms)},
                   {"reason", nullable(d.reason)},
                   {"deliveries", nullable(d.deliveries)},
                   {"fields", fields_json(d.fields)}};
    out["state"] = "dead";
  }
  return out;
}

}  // namespace expiry
