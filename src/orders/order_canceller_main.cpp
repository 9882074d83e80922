// order-canceller: cancels orders whose payment timeout fired, reading the order timeouts'
// own stream (orders:timeouts, where order-sim schedules them; not the relay's default stream,
// which holds other producers' tasks) as a consumer group member.
// Config: flags > ORDER_CANCELLER_* env > --config JSON > defaults.
#include <csignal>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "config/consumer_config.h"
#include "protocol/errors.h"
#include "io/event_loop.h"
#include "io/fd_limit.h"
#include "io/http_endpoint.h"
#include "io/metrics.h"
#include "config/logging.h"
#include "orders/order_canceller.h"
#include "config/settings.h"
#include "consumer/stream_consumer.h"
#include "protocol/text_escape.h"

int main(int argc, char** argv) {
  using namespace expiry;
  CLI::App app{"order-canceller: cancels unpaid orders when their payment timeout fires.\n"
               "Every option can also be set as ORDER_CANCELLER_<NAME> or in the --config JSON file."};
  std::map<std::string, std::string> flags;
  const auto specs = consumer_option_specs(kOrderTimeoutStream);
  add_flags(app, specs, flags);
  std::string config_path;
  bool check_only = false;
  app.add_option("--config", config_path, "JSON config file (env ORDER_CANCELLER_CONFIG)");
  app.add_flag("--check-config", check_only, "validate the settings, print them and exit");
  add_version_flag(app, "order-canceller");
  if (auto code = parse_command_line(app, argc, argv, "order-canceller")) return *code;

  ConsumerConfig config;
  try {
    const auto settings = load_settings(specs, flags, config_path, "ORDER_CANCELLER");
    config = consumer_config_from(settings);
    setup_logging("order-canceller", config.log_format, config.log_level);
    if (check_only) {
      std::cout << "configuration OK\n"
                << settings.describe({{"redis_url", config.redis.redacted()},
                                      {"stream", config.stream},
                                      {"dead_stream", config.dead_stream},
                                      {"consumer", config.consumer}});
      return 0;
    }
  } catch (const std::exception& e) {  // ConfigError; anything else is reported the same way, never an abort
    std::cerr << "order-canceller: configuration error: " << escape_text(e.what()) << "\n";
    return 2;
  }

  std::signal(SIGPIPE, SIG_IGN);
  // As in the relay: HTTP clients are capped well below the limit, Redis keeps the rest.
  raise_fd_limit();
  EventLoop loop;
  std::unique_ptr<OrderCanceller> canceller;
  StreamConsumer consumer(loop, config, [&](const StreamEntry& e, StreamConsumer::Done done) {
    canceller->handle(e, std::move(done));
  });
  canceller = std::make_unique<OrderCanceller>(consumer.commands());
  consumer.set_on_commands_ready([&] { canceller->load_library(); });
  Metrics metrics;
  register_canceller_metrics(metrics, canceller->stats(), consumer);
  std::unique_ptr<HttpEndpoint> http;
  if (config.metrics_port > 0) {
    try {
      http = std::make_unique<HttpEndpoint>(
          loop, config.metrics_bind, config.metrics_port, [&] { return metrics.render(); },
          [&](std::string& why) {
            if (consumer.ready()) return true;
            why = "connections or consumer group not ready";
            return false;
          });
    } catch (const Error& e) {
      std::cerr << "order-canceller: " << escape_text(e.what()) << "\n";
      return 2;
    }
  }
  int exit_code = 0;
  consumer.set_on_fatal([&](const std::string& why) {
    spdlog::critical("{}", why);
    exit_code = 2;
    loop.stop();
  });
  auto stop = [&] { consumer.stop([&] { loop.stop(); }); };
  loop.on_signal(SIGTERM, stop);
  loop.on_signal(SIGINT, stop);
  consumer.start();
  loop.run();
  http.reset();
  const auto& s = canceller->stats();
  spdlog::info("cancelled={} skipped_paid={} already_cancelled={} missing={} failed={}", s.cancelled,
               s.skipped_paid, s.already_cancelled, s.missing, s.failed);
  return exit_code;
}
