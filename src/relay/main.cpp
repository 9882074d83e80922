// expiry-relay: turns Redis key expirations into stream entries, on time and exactly once.
// Shaped like libevent's sample/hello-world.c: config, loop, components, signals, dispatch.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "protocol/errors.h"
#include "io/event_loop.h"
#include "io/fd_limit.h"
#include "io/http_endpoint.h"
#include "config/logging.h"
#include "relay/relay.h"
#include "config/relay_config.h"
#include "config/settings.h"
#include "protocol/text_escape.h"

int main(int argc, char** argv) {
  using namespace expiry;
  CLI::App app{"expiry-relay: forwards expiring Redis tasks into a stream, exactly once and on time.\n"
               "Every option can also be set as EXPIRY_RELAY_<NAME> or in the --config JSON file\n"
               "(precedence: flag > env > file > default)."};
  std::map<std::string, std::string> flags;
  const auto specs = relay_option_specs();
  add_flags(app, specs, flags);
  std::string config_path;
  bool check_only = false;
  app.add_option("--config", config_path, "JSON config file (env EXPIRY_RELAY_CONFIG)");
  app.add_flag("--check-config", check_only, "validate the settings, print them and exit");
  add_version_flag(app, "expiry-relay");
  if (auto code = parse_command_line(app, argc, argv, "expiry-relay")) return *code;

  RelayConfig config;
  try {
    const auto settings = load_settings(specs, flags, config_path, "EXPIRY_RELAY");
    config = relay_config_from(settings);
    if (check_only) {
      std::cout << "configuration OK\n"
                << settings.describe(
                       {{"redis_url", config.redis.redacted()}, {"stream", config.stream}, {"instance", config.instance}});
      return 0;
    }
    setup_logging("expiry-relay", config.log_format, config.log_level);
  } catch (const std::exception& e) {  // ConfigError; anything else is reported the same way, never an abort
    std::cerr << "expiry-relay: configuration error: " << escape_text(e.what()) << "\n";
    return 2;
  }

  std::signal(SIGPIPE, SIG_IGN);
  // Every descriptor the hard limit allows, so that Redis reconnects never run short (HTTP
  // clients are capped well below the limit: see HttpEndpoint::kReservedFds).
  raise_fd_limit();
  EventLoop loop;
  Relay relay(loop, config);
  auto stop = [&] { relay.stop([&] { loop.stop(); }); };
  loop.on_signal(SIGTERM, stop);
  loop.on_signal(SIGINT, stop);
  std::unique_ptr<HttpEndpoint> http;
  if (config.metrics_port > 0) {
    try {
      http = std::make_unique<HttpEndpoint>(
          loop, config.metrics_bind, config.metrics_port, [&] { return relay.metrics().render(); },
          [&](std::string& why) { return relay.ready(why); });
      http->set_health_check([&](std::string& why) { return relay.healthy(why); });
    } catch (const Error& e) {
      std::cerr << "expiry-relay: " << escape_text(e.what()) << "\n";
      return 2;
    }
  }
  relay.start();
  loop.run();
  http.reset();
  return relay.exit_code();
}
