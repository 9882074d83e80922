// See consumer_program.h.
#include "consumer/consumer_program.h"

#include <spdlog/spdlog.h>

namespace expiry {

int run_consumer_program(ServiceProcess& process, const ConsumerConfig& config, Metrics& metrics,
                         const StartConsumer& start) {
  EventLoop& loop = process.loop();
  Consumer* consumer = nullptr;  // once the layout is known
  const auto ready = [&consumer](std::string& why) {
    if (consumer) return consumer->ready(why);
    why = "starting";
    return false;
  };
  if (!process.serve_http(config.metrics_bind, config.metrics_port, [&] { return metrics.render(); }, ready)) {
    return ServiceProcess::kExitConfigError;
  }
  int exit_code = 0;
  const FatalHandler fatal = [&](const std::string& why) {
    spdlog::critical("{}", why);
    exit_code = ServiceProcess::kExitConfigError;
    loop.stop();
  };
  LayoutProbe probe(loop, LayoutProbe::options_of(config, "expiry-consumer-setup-" + config.consumer));
  probe.start(
      [&](const RedisLayout& layout) {
        if (layout.cluster) {
          spdlog::info("{} is a Redis Cluster: reading the {} bucket streams of namespace {}", config.redis.where(),
                       layout.buckets, config.ns);
        }
        consumer = &start(layout, fatal);
      },
      fatal);
  process.on_stop_signal([&] {
    if (consumer) {
      consumer->stop([&] { loop.stop(); });
    } else {
      loop.stop();  // still finding out the layout: nothing read yet
    }
  });
  process.run();
  return exit_code;
}

}  // namespace expiry
