// The relay's metrics table: names, help and where each value comes from.
#pragma once

#include "io/function_caller.h"
#include "io/metrics.h"
#include "io/redis_connection.h"
#include "relay/relay_stats.h"

namespace expiry {

// Registers every relay metric on `metrics`, reading `stats` and the connections at scrape
// time, and points stats.lateness at the lateness histogram.
void register_relay_metrics(Metrics& metrics, RelayStats& stats, const RedisConnection& commands,
                            const RedisConnection& subscriber, const FunctionCaller& functions);

}  // namespace expiry
