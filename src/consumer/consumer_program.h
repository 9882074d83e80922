// The run of a program built on Consumer (order-canceller, expiry-webhook): /metrics, /healthz
// and /readyz on the configured port; the layout found out (LayoutProbe); then `start` builds and
// starts the program's Consumer; SIGTERM/SIGINT stop it (its held entries settled) before the
// loop ends. A fatal problem (the probe's, or one the consumer reports through `fatal`) ends the
// run with ServiceProcess::kExitConfigError.
#pragma once

#include <functional>
#include <string>

#include "config/consumer_config.h"
#include "consumer/consumer.h"
#include "io/layout_probe.h"
#include "service/metrics.h"
#include "service/service_process.h"

namespace expiry {

using FatalHandler = std::function<void(const std::string& why)>;
// Builds, starts and returns the program's Consumer (owned by the caller, alive until the run
// returns); `fatal` is for its set_on_fatal.
using StartConsumer = std::function<Consumer&(const RedisLayout& layout, const FatalHandler& fatal)>;

// Serves until stopped; returns the exit code (0, or kExitConfigError after a fatal problem or
// when the metrics port cannot be bound).
int run_consumer_program(ServiceProcess& process, const ConsumerConfig& config, Metrics& metrics,
                         const StartConsumer& start);

}  // namespace expiry
