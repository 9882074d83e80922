// expiry-relay: turns Redis key expirations into stream entries, on time and exactly once.
// Shaped like libevent's sample/hello-world.c: config, loop, components, signals, dispatch
// (configure_service, then ServiceProcess).
#include "config/logging.h"
#include "config/relay_config.h"
#include "config/service_options.h"
#include "io/service_process.h"
#include "protocol/errors.h"
#include "relay/cluster_relay.h"
#include "relay/relay.h"
#include "relay/startup_probe.h"

#include <spdlog/spdlog.h>

namespace {

using namespace expiry;

const ServiceIdentity kRelayService{
    "expiry-relay", "EXPIRY_RELAY",
    "expiry-relay: forwards expiring Redis tasks into a stream, exactly once and on time.\n"
    "Every option can also be set as EXPIRY_RELAY_<NAME> or in the --config JSON file\n"
    "(precedence: flag > env > file > default)."};

// Runs `relay` (a Relay or a ClusterRelay) until a stop signal or a fatal error.
template <typename AnyRelay>
int serve(ServiceProcess& process, const RelayConfig& config, AnyRelay& relay) {
  process.on_stop_signal([&] { relay.stop([&] { process.loop().stop(); }); });
  const bool serving = process.serve_http(
      config.metrics_bind, config.metrics_port, [&] { return relay.metrics().render(); },
      [&](std::string& why) { return relay.ready(why); }, [&](std::string& why) { return relay.healthy(why); });
  if (!serving) return ServiceProcess::kExitConfigError;
  relay.start();
  process.run();
  return relay.exit_code();
}

int run_relay(ServiceProcess& process, const RelayConfig& config) {
  std::string unreachable;
  std::optional<StartupFacts> facts;
  try {
    facts = probe_redis(config, &unreachable);
  } catch (const ConfigError& e) {
    spdlog::critical("{}", e.what());
    return ServiceProcess::kExitConfigError;
  }
  if (facts && facts->cluster) {
    ClusterRelay relay(process.loop(), config, facts->bucket_count);
    return serve(process, config, relay);
  }
  BucketScope scope = BucketScope::all(facts ? facts->bucket_count : (config.buckets != 0 ? config.buckets : 1));
  if (!facts) {
    spdlog::warn("Redis cannot be reached yet ({}); starting with {} bucket(s) on a single Redis, checked again "
                 "when it answers",
                 unreachable, scope.bucket_count);
  }
  Relay relay(process.loop(), config, std::move(scope));
  return serve(process, config, relay);
}

}  // namespace

int main(int argc, char** argv) {
  RelayConfig config;
  const auto configure = [&config](const Settings& settings) -> std::map<std::string, std::string> {
    config = relay_config_from(settings);
    return {{"redis_url", config.redis.redacted()}, {"stream", config.stream}, {"instance", config.instance}};
  };
  const auto start_logging = [&config] { setup_logging("expiry-relay", config.log_format, config.log_level); };
  if (auto code = configure_service(kRelayService, relay_option_specs(), argc, argv, configure, start_logging)) {
    return *code;
  }
  ServiceProcess process(kRelayService.program);
  return run_relay(process, config);
}
