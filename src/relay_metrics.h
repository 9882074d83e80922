// The relay's metrics table: names, help and where each value comes from.
#pragma once

#include "function_caller.h"
#include "metrics.h"
#include "redis_connection.h"
#include "relay_stats.h"

namespace expiry {

// Registers every relay metric on `metrics`, reading `stats` and the connections at scrape
// time, and points stats.lateness at the lateness histogram.
void register_relay_metrics(Metrics& metrics, RelayStats& stats, const RedisConnection& commands,
                            const RedisConnection& subscriber, const FunctionCaller& functions);

}  // namespace expiry
