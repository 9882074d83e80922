// order-canceller: cancels orders whose payment timeout fired, reading the order timeouts'
// own stream (orders:timeouts, where order-sim schedules them; not the relay's default stream,
// which holds other producers' tasks) as a consumer group member.
// Config: flags > ORDER_CANCELLER_* env > --config JSON > defaults.
#include <spdlog/spdlog.h>

#include "config/consumer_config.h"
#include "config/logging.h"
#include "config/service_options.h"
#include "consumer/stream_consumer.h"
#include "io/metrics.h"
#include "io/service_process.h"
#include "orders/order_canceller.h"

namespace {

using namespace expiry;

const ServiceIdentity kCancellerService{
    "order-canceller", "ORDER_CANCELLER",
    "order-canceller: cancels unpaid orders when their payment timeout fires.\n"
    "Every option can also be set as ORDER_CANCELLER_<NAME> or in the --config JSON file."};

// The canceller's configuration stage; logging starts before --check-config answers, so that a
// log setting setup_logging refuses fails the check too.
std::optional<int> configure_canceller(int argc, char** argv, ConsumerConfig& config) {
  const auto configure = [&config](const Settings& settings) -> std::map<std::string, std::string> {
    config = consumer_config_from(settings);
    setup_logging("order-canceller", config.log_format, config.log_level);
    return {{"redis_url", config.redis.redacted()},
            {"stream", config.stream},
            {"dead_stream", config.dead_stream},
            {"consumer", config.consumer}};
  };
  return configure_service(kCancellerService, consumer_option_specs(kOrderTimeoutStream), argc, argv, configure,
                           {});
}

bool serve_http(ServiceProcess& process, const ConsumerConfig& config, const Metrics& metrics,
                const StreamConsumer& consumer) {
  return process.serve_http(config.metrics_bind, config.metrics_port, [&] { return metrics.render(); },
                            [&](std::string& why) {
                              if (consumer.ready()) return true;
                              why = "connections or consumer group not ready";
                              return false;
                            });
}

void log_outcomes(const CancellerStats& s) {
  spdlog::info("cancelled={} skipped_paid={} already_cancelled={} missing={} failed={}", s.cancelled,
               s.skipped_paid, s.already_cancelled, s.missing, s.failed);
}

int run_canceller(ServiceProcess& process, const ConsumerConfig& config) {
  EventLoop& loop = process.loop();
  std::unique_ptr<OrderCanceller> canceller;
  StreamConsumer consumer(loop, config, [&](const StreamEntry& e, StreamConsumer::Done done) {
    canceller->handle(e, std::move(done));
  });
  canceller = std::make_unique<OrderCanceller>(consumer.commands());
  consumer.set_on_commands_ready([&] { canceller->load_library(); });
  Metrics metrics;
  register_canceller_metrics(metrics, canceller->stats(), consumer);
  if (!serve_http(process, config, metrics, consumer)) return ServiceProcess::kExitConfigError;
  int exit_code = 0;
  consumer.set_on_fatal([&](const std::string& why) {
    spdlog::critical("{}", why);
    exit_code = ServiceProcess::kExitConfigError;
    loop.stop();
  });
  process.on_stop_signal([&] { consumer.stop([&] { loop.stop(); }); });
  consumer.start();
  process.run();
  log_outcomes(canceller->stats());
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  ConsumerConfig config;
  if (auto code = configure_canceller(argc, argv, config)) return *code;
  ServiceProcess process(kCancellerService.program);
  return run_canceller(process, config);
}
