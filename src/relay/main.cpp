// expiry-relay: turns Redis key expirations into stream entries, on time and exactly once.
// Shaped like libevent's sample/hello-world.c: config, loop, components, signals, dispatch
// (configure_service, then ServiceProcess, then the layout probe on the loop).
#include "base/errors.h"
#include "config/dead_stream_text.h"
#include "config/relay_config.h"
#include "config/service_options.h"
#include "io/layout_probe.h"
#include "log/logging.h"
#include "relay/cluster_relay.h"
#include "relay/relay.h"
#include "service/service_process.h"

#include <spdlog/spdlog.h>

namespace {

using namespace expiry;

const ServiceIdentity kRelayService{
    "expiry-relay", "EXPIRY_RELAY",
    "expiry-relay: forwards expiring Redis tasks into a stream, exactly once and on time.\n"
    "Every option can also be set as EXPIRY_RELAY_<NAME> or in the --config JSON file\n"
    "(precedence: flag > env > file > default)."};

// The relay once the layout is known: one Relay on a single Redis, a ClusterRelay (one Relay
// per primary) on a cluster. Exactly one exists after start().
struct AnyRelay {
  std::unique_ptr<Relay> single;
  std::unique_ptr<ClusterRelay> cluster;
  Clock::time_point probing_since = Clock::now();

  bool started() const { return single || cluster; }
  void start(EventLoop& loop, const RelayConfig& config, const RedisLayout& layout) {
    if (layout.cluster) {
      cluster = std::make_unique<ClusterRelay>(loop, config, layout.buckets);
      cluster->start();
    } else {
      single = std::make_unique<Relay>(loop, config, BucketScope::all(layout.buckets));
      single->start();
    }
  }
  std::string render() const {
    if (single) return single->metrics().render();
    if (cluster) return cluster->metrics().render();
    return "";
  }
  bool ready(std::string& why) const {
    if (single) return single->ready(why);
    if (cluster) return cluster->ready(why);
    why = "finding out the layout of the Redis at the URL (see the log)";
    return false;
  }
  // Before the layout is known, unhealthy once no answer came for unhealthy_after, as a relay
  // without a ready connection would be.
  bool healthy(const RelayConfig& config, std::string& why) const {
    if (single) return single->healthy(why);
    if (cluster) return cluster->healthy(why);
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - probing_since);
    if (config.unhealthy_after.count() == 0 || waited <= config.unhealthy_after) return true;
    why = "no answer from Redis for " + std::to_string(waited.count() / 1000) + " s; see the log";
    return false;
  }
  void stop(std::function<void()> done) {
    if (single) single->stop(std::move(done));
    if (cluster) cluster->stop(std::move(done));
  }
  int exit_code() const { return single ? single->exit_code() : cluster ? cluster->exit_code() : 0; }
};

// Finds out the layout on the loop (LayoutProbe, shared with the consumers), then runs the relay
// until a stop signal or a fatal error. /metrics, /readyz and /healthz answer from the start.
int run_relay(ServiceProcess& process, const RelayConfig& config) {
  EventLoop& loop = process.loop();
  AnyRelay relay;
  int exit_code = 0;
  const bool serving = process.serve_http(
      config.metrics_bind, config.metrics_port, [&] { return relay.render(); },
      [&](std::string& why) { return relay.ready(why); }, [&](std::string& why) { return relay.healthy(config, why); });
  if (!serving) return ServiceProcess::kExitConfigError;
  LayoutProbe probe(loop, LayoutProbe::options_of(config, "expiry-relay-setup-" + config.instance));
  probe.start([&](const RedisLayout& layout) { relay.start(loop, config, layout); },
              [&](const std::string& why) {
                spdlog::critical("{}", why);
                exit_code = ServiceProcess::kExitConfigError;
                loop.stop();
              });
  process.on_stop_signal([&] {
    if (relay.started()) {
      relay.stop([&] { loop.stop(); });
    } else {
      loop.stop();  // still finding out the layout: nothing to drain
    }
  });
  process.run();
  return exit_code != 0 ? exit_code : relay.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  RelayConfig config;
  const auto configure = [&config](const Settings& settings) -> std::map<std::string, std::string> {
    config = relay_config_from(settings);
    return {{"redis_url", config.redis.redacted()},
            {"stream", config.stream},
            {"dead_stream", effective_dead_stream_text(config.ns, config.dead_stream, config.buckets)},
            {"instance", config.instance}};
  };
  const auto start_logging = [&config] { setup_logging("expiry-relay", config.log_format, config.log_level); };
  if (auto code = configure_service(kRelayService, relay_option_specs(), argc, argv, configure, start_logging)) {
    return *code;
  }
  ServiceProcess process(kRelayService.program);
  return run_relay(process, config);
}
