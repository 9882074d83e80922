// See relay_metrics.h. One table, like twemproxy's STATS_SERVER_CODEC.
#include "relay/relay_metrics.h"

#include "service/service_metrics.h"

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
      labelled_family(K::Counter, "expiry_relay_tasks_dead_lettered_late_total",
                      "Tasks later than their lateness limit (--max-late-ms or the task's own) when claimed: moved to "
                      "the dead-letter stream with reason late instead of the stream, by the path that claimed them.",
                      "via", {{"event", n(s.dead_lettered_late_event)}, {"sweep", n(s.dead_lettered_late_sweep)}}),
      counter_family("expiry_relay_claims_paused_total",
                     "Event claims that found their bucket paused (the task is held; the sweep after the resume forwards it).",
                     n(s.claims_paused)),
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
std::vector<Metrics::Family> sweep_and_connection_families(const RelayStats& s,
                                                           std::function<RelayConnections()> connections) {
  const auto ready = [](const std::vector<const RedisConnection*>& list) {
    double n = 0;
    for (const auto* c : list) n += c->ready() ? 1.0 : 0.0;
    return n;
  };
  const auto reconnects = [](const std::vector<const RedisConnection*>& list) {
    double n = 0;
    for (const auto* c : list) n += static_cast<double>(c->reconnects());
    return n;
  };
  const auto per_connection = [connections](auto read) {
    return std::vector<std::pair<std::string, std::function<double()>>>{
        {"commands", [connections, read] { return read(connections().commands); }},
        {"subscriber", [connections, read] { return read(connections().subscribers); }}};
  };
  return {
      counter_family("expiry_relay_sweep_batches_total", "Sweep calls (each claims at most sweep_batch tasks).",
                     n(s.sweep_batches)),
      counter_family("expiry_relay_sweep_errors_total", "Sweep calls that failed.", n(s.sweep_errors)),
      counter_family("expiry_relay_sweeps_migrating_total",
                     "Sweep calls that stopped at a task whose hash slot was moving to another node (retried).",
                     n(s.sweeps_migrating)),
      counter_family("expiry_relay_sweep_seconds_total", "Round-trip time spent in sweep calls.",
                     [&s] { return static_cast<double>(s.sweep_time_us) / 1e6; }),
      counter_family("expiry_relay_wakeups_total",
                     "New-earliest-task notices received on the wake channel for this relay's database "
                     "(notices naming another database are ignored).",
                     n(s.wakeups)),
      counter_family("expiry_relay_health_probe_failures_total", "Subscriber health probes that did not come back.",
                     n(s.health_probe_failures)),
      counter_family("expiry_relay_group_recreated_total",
                     "Times the consumer group was missing at a reconnect after this relay had seen it, and was created again at $.",
                     n(s.group_recreated)),
      counter_family("expiry_relay_function_reloads_total", "Times the function library was missing and loaded again.",
                     [connections] {
                       double n = 0;
                       for (const auto* f : connections().functions) n += static_cast<double>(f->reloads());
                       return n;
                     }),
      labelled_family(K::Counter, "expiry_relay_reconnects_total",
                      "Reconnections after a lost connection, by connection (summed over the nodes of a cluster).",
                      "connection", per_connection(reconnects)),
      labelled_family(K::Gauge, "expiry_relay_connected",
                      "1 if the connection is ready (on a cluster: how many primaries' connections are).", "connection",
                      per_connection(ready)),
      gauge_family("expiry_relay_nodes", "Redis nodes this relay serves (1, or the primaries of a cluster).",
                   [connections] { return static_cast<double>(connections().commands.size()); }),
      gauge_family("expiry_relay_keyspace_notifications",
                   "1 if expired keyevents are on (notify-keyspace-events, checked at every reconnect; on a cluster, on "
                   "every primary); 0 if off or unknown: tasks then fire from the sweep only.",
                   [&s] { return s.keyspace_notifications_on() ? 1.0 : 0.0; }),
      gauge_family("expiry_relay_pending_tasks", "Tasks in the schedule, as of the last sweep.", [&s] { return static_cast<double>(s.pending()); }),
      gauge_family("expiry_relay_overdue_tasks", "Tasks due but not yet forwarded, as of the last sweep.",
                   [&s] { return static_cast<double>(s.overdue()); }),
      gauge_family("expiry_relay_oldest_overdue_seconds", "Age of the earliest overdue task, as of the last sweep.",
                   [&s] { return static_cast<double>(s.oldest_overdue_ms()) / 1000.0; }),
      gauge_family("expiry_relay_bucket_paused",
                   "Buckets paused (expiry-ctl pause) as of their last sweep: 1 on a one-bucket namespace while "
                   "paused; held tasks count in expiry_relay_overdue_tasks.",
                   [&s] { return static_cast<double>(s.paused_buckets()); }),
  };
}

// The retention metrics, one series per stream (StreamTrimmer).
std::vector<Metrics::Family> retention_families(const RelayStats& s, const std::vector<std::string>& streams) {
  const auto per_stream = [&s, &streams](auto read) {
    std::vector<std::pair<std::string, std::function<double()>>> series;
    for (const auto& stream : streams) {
      series.push_back({stream, [&s, stream, read] {
                          auto it = s.streams.find(stream);
                          return it == s.streams.end() ? 0.0 : static_cast<double>(read(it->second));
                        }});
    }
    return series;
  };
  using Trims = RelayStats::StreamTrims;
  Metrics::Family skipped{K::Counter, "expiry_relay_stream_trims_skipped_total",
                          "Trim passes that left a stream alone, by reason (no_group: no consumer group on it).", {}};
  for (auto& [stream, read] : per_stream([](const Trims& t) { return t.skipped_no_group; })) {
    skipped.series.push_back({{{"stream", stream}, {"reason", "no_group"}}, std::move(read)});
  }
  return {
      labelled_family(K::Counter, "expiry_relay_stream_trimmed_entries_total",
                      "Stream entries removed by retention (acknowledged by every group and older than --stream-retention-ms).",
                      "stream", per_stream([](const Trims& t) { return t.trimmed; })),
      labelled_family(K::Gauge, "expiry_relay_stream_length", "Entries in the stream (XLEN) after its last trim pass.",
                      "stream", per_stream([](const Trims& t) { return t.length; })),
      std::move(skipped),
      labelled_family(K::Counter, "expiry_relay_stream_trim_errors_total", "Trim calls that failed, by stream.",
                      "stream", per_stream([](const Trims& t) { return t.trim_errors; })),
  };
}

}  // namespace

void register_relay_metrics(Metrics& metrics, RelayStats& stats, std::function<RelayConnections()> connections,
                            const std::vector<std::string>& streams) {
  for (const auto& family : claim_families(stats)) metrics.add(family);
  for (const auto& family : retention_families(stats, streams)) metrics.add(family);
  for (const auto& family : sweep_and_connection_families(stats, std::move(connections))) metrics.add(family);
  stats.lateness = &metrics.histogram("expiry_relay_lateness_seconds",
                                      "Time from a task's due time to its stream entry (Redis clock); only tasks scheduled with a due time in the future.",
                                      lateness_buckets_seconds());
}

void register_probe_metrics(Metrics& metrics, std::function<bool(std::string&)> ready,
                            std::function<bool(std::string&)> healthy) {
  metrics.add({K::Gauge, "expiry_relay_ready", "1 if /readyz answers 200.", {{{}, [ready] {
                 std::string why;
                 return ready(why) ? 1.0 : 0.0;
               }}}});
  metrics.add({K::Gauge, "expiry_relay_healthy", "1 if /healthz answers 200.", {{{}, [healthy] {
                 std::string why;
                 return healthy(why) ? 1.0 : 0.0;
               }}}});
}

}  // namespace expiry
