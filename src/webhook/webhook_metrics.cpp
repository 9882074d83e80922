// See webhook_metrics.h.
#include "webhook/webhook_metrics.h"

#include "service/service_metrics.h"

namespace expiry {

void register_webhook_metrics(Metrics& metrics, const WebhookDispatcher& dispatcher, const ConsumerStats& c,
                              std::function<bool()> ready) {
  const auto n = [](const uint64_t& v) { return read_at_scrape(v); };
  Metrics::Family deliveries{Metrics::Kind::Counter, "expiry_webhook_deliveries_total",
                             "Delivery attempts by endpoint and status class (2xx, 3xx, 4xx, 5xx, error, refused).",
                             {}};
  Metrics::Family in_flight{Metrics::Kind::Gauge, "expiry_webhook_in_flight", "Requests in flight by endpoint.", {}};
  Metrics::Family queued{Metrics::Kind::Gauge, "expiry_webhook_queued",
                         "Entries waiting for a free request slot, by endpoint.", {}};
  Metrics::Family retries{Metrics::Kind::Counter, "expiry_webhook_retries_total",
                          "Failed attempts scheduled again, by endpoint.", {}};
  Metrics::Family dead{Metrics::Kind::Counter, "expiry_webhook_dead_letters_total",
                       "Tasks dead-lettered (rejected, refused destination, or out of attempts), by endpoint.", {}};
  for (const auto& [name, s] : dispatcher.stats()) {
    for (const char* cls : {"2xx", "3xx", "4xx", "5xx", "error", "refused"}) {
      const std::string key = cls;
      const EndpointStats* stats = &s;
      deliveries.series.push_back({{{"endpoint", name}, {"class", key}}, [stats, key] {
                                     auto it = stats->deliveries.find(key);
                                     return it == stats->deliveries.end() ? 0.0 : static_cast<double>(it->second);
                                   }});
    }
    in_flight.series.push_back({{{"endpoint", name}}, n(s.in_flight)});
    queued.series.push_back({{{"endpoint", name}}, n(s.queued)});
    retries.series.push_back({{{"endpoint", name}}, n(s.retries)});
    dead.series.push_back({{{"endpoint", name}}, n(s.dead_letters)});
  }
  const std::vector<Metrics::Family> table = {
      deliveries,
      in_flight,
      queued,
      retries,
      dead,
      counter_family("expiry_webhook_entries_read_total", "Stream entries read with XREADGROUP.", n(c.read)),
      counter_family("expiry_webhook_entries_acked_total", "Stream entries acknowledged.", n(c.acked)),
      counter_family("expiry_webhook_entries_dead_lettered_total",
                     "Entries moved to the dead-letter stream by the consumer.", n(c.dead_lettered)),
      counter_family("expiry_webhook_errors_total", "Redis errors (XACK, XCLAIM, XPENDING, group setup).",
                     n(c.errors)),
      gauge_family("expiry_webhook_ready", "1 if the connections are up and the group exists.",
                   [ready] { return ready() ? 1.0 : 0.0; }),
  };
  for (const auto& f : table) metrics.add(f);
}

}  // namespace expiry
