// expiry-webhook's metrics table (Prometheus, service/metrics): deliveries by endpoint and
// status class, in flight, queued, retries and dead letters by endpoint, the consumer's
// counters, and readiness. The due -> delivered latency histogram is registered by main.
#pragma once

#include <functional>

#include "consumer/entry_handler.h"
#include "service/metrics.h"
#include "webhook/dispatcher.h"

namespace expiry {

void register_webhook_metrics(Metrics& metrics, const WebhookDispatcher& dispatcher, const ConsumerStats& consumer,
                              std::function<bool()> ready);

}  // namespace expiry
