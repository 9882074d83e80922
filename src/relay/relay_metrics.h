// The relay's metrics table: names, help and where each value comes from.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "io/function_caller.h"
#include "io/redis_connection.h"
#include "relay/relay_stats.h"
#include "service/metrics.h"

namespace expiry {

// Registers every relay metric on `metrics`, reading `stats` and the connections at scrape
// time, and points stats.lateness at the lateness histogram.
// The connections behind the connection metrics: one relay's, or every node relay's on a
// cluster (counted and summed).
struct RelayConnections {
  std::vector<const RedisConnection*> commands;
  std::vector<const RedisConnection*> subscribers;
  std::vector<const FunctionCaller*> functions;
};

// Registers the relay's counters, gauges and lateness histogram (sets stats.lateness).
// `connections` is read at every scrape; `streams`: the streams the relay trims, one series each
// in the retention metrics.
void register_relay_metrics(Metrics& metrics, RelayStats& stats, std::function<RelayConnections()> connections,
                            const std::vector<std::string>& streams);

// expiry_relay_ready and expiry_relay_healthy: the same answers as /readyz and /healthz.
void register_probe_metrics(Metrics& metrics, std::function<bool(std::string&)> ready,
                            std::function<bool(std::string&)> healthy);

}  // namespace expiry
