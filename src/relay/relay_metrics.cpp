// See relay_metrics.h. One table, like twemproxy's STATS_SERVER_CODEC.
#include "relay/relay_metrics.h"

#include "io/service_metrics.h"

namespace expiry {

namespace {

using K = Metrics::Kind;

template <typename Integer>
std::function<double()> n(const Integer& value) {
  return read_at_scrape(value);
}

// The forwarding, claim and event counters.
std::vector<Metrics::Family> claim_families(const RelayStats& s) {
  return {
      labelled_family(K::Counter, "expiry_relay_tasks_forwarded_total",
                      "Tasks forwarded into the stream, by the path that claimed them.", "via",
                      {{"event", n(s.forwarded_event)}, {"sweep", n(s.forwarded_sweep)}}),
      counter_family("expiry_relay_tasks_scheduled_already_due_total",
                     "Forwarded tasks that were already due when scheduled; they have no lateness and are not in the lateness histogram.",
                     n(s.forwarded_already_due)),
      counter_family("expiry_relay_claims_lost_total",
                     "Event claims that found the task already forwarded or cancelled (another relay or the sweep won).",
                     n(s.claims_lost)),
      counter_family("expiry_relay_claims_not_due_total", "Stale events: the task had been rescheduled later.",
                     n(s.claims_not_due)),
      counter_family("expiry_relay_claims_deferred_total",
                     "Events left to the sweep because too many claims were in flight.", n(s.claims_deferred)),
      counter_family("expiry_relay_events_to_draining_sweep_total",
                     "Expired keyevents not claimed one by one because a sweep was already draining every due task.",
                     n(s.events_to_draining_sweep)),
      counter_family("expiry_relay_claim_errors_total", "Event claims that failed (the sweep retries them).",
                     n(s.claim_errors)),
      counter_family("expiry_relay_events_received_total", "Expired keyevents received.", n(s.events_received)),
      counter_family("expiry_relay_events_ignored_total",
                     "Expired keyevents of other databases or namespaces, or not trigger keys.", n(s.events_ignored)),
      counter_family("expiry_relay_events_invalid_id_total",
                     "Expired trigger keys of this namespace whose id the library rejects (not claimed; logged rate-limited).",
                     n(s.events_invalid_id)),
      counter_family("expiry_relay_events_other_db_total",
                     "Expired trigger keys of this namespace in another database than the relay's (producers on another db?).",
                     n(s.events_other_db)),
  };
}

// The sweep, connection and schedule metrics.
std::vector<Metrics::Family> sweep_and_connection_families(const RelayStats& s, const RedisConnection& commands,
                                                           const RedisConnection& subscriber,
                                                           const FunctionCaller& functions) {
  const auto ready = [](const RedisConnection& c) { return [&c] { return c.ready() ? 1.0 : 0.0; }; };
  const auto reconnects = [](const RedisConnection& c) { return [&c] { return static_cast<double>(c.reconnects()); }; };
  const auto per_connection = [](auto read, const RedisConnection& a, const RedisConnection& b) {
    return std::vector<std::pair<std::string, std::function<double()>>>{{"commands", read(a)}, {"subscriber", read(b)}};
  };
  return {
      counter_family("expiry_relay_sweep_batches_total", "Sweep calls (each claims at most sweep_batch tasks).",
                     n(s.sweep_batches)),
      counter_family("expiry_relay_sweep_errors_total", "Sweep calls that failed.", n(s.sweep_errors)),
      counter_family("expiry_relay_sweep_seconds_total", "Round-trip time spent in sweep calls.",
                     [&s] { return static_cast<double>(s.sweep_time_us) / 1e6; }),
      counter_family("expiry_relay_wakeups_total", "New-earliest-task notices received on the wake channel.",
                     n(s.wakeups)),
      counter_family("expiry_relay_health_probe_failures_total", "Subscriber health probes that did not come back.",
                     n(s.health_probe_failures)),
      counter_family("expiry_relay_group_recreated_total",
                     "Times the consumer group was missing at a reconnect after this relay had seen it, and was created again at $.",
                     n(s.group_recreated)),
      counter_family("expiry_relay_function_reloads_total", "Times the function library was missing and loaded again.",
                     [&functions] { return static_cast<double>(functions.reloads()); }),
      labelled_family(K::Counter, "expiry_relay_reconnects_total",
                      "Reconnections after a lost connection, by connection.", "connection",
                      per_connection(reconnects, commands, subscriber)),
      labelled_family(K::Gauge, "expiry_relay_connected", "1 if the connection is ready.", "connection",
                      per_connection(ready, commands, subscriber)),
      gauge_family("expiry_relay_pending_tasks", "Tasks in the schedule, as of the last sweep.", n(s.pending)),
      gauge_family("expiry_relay_overdue_tasks", "Tasks due but not yet forwarded, as of the last sweep.",
                   n(s.overdue)),
      gauge_family("expiry_relay_oldest_overdue_seconds", "Age of the earliest overdue task, as of the last sweep.",
                   [&s] { return static_cast<double>(s.oldest_overdue_ms) / 1000.0; }),
  };
}

}  // namespace

void register_relay_metrics(Metrics& metrics, RelayStats& stats, const RedisConnection& commands,
                            const RedisConnection& subscriber, const FunctionCaller& functions) {
  for (const auto& family : claim_families(stats)) metrics.add(family);
  for (const auto& family : sweep_and_connection_families(stats, commands, subscriber, functions)) metrics.add(family);
  stats.lateness = &metrics.histogram("expiry_relay_lateness_seconds",
                                      "Time from a task's due time to its stream entry (Redis clock); only tasks scheduled with a due time in the future.",
                                      lateness_buckets_seconds());
}

}  // namespace expiry
