// order-canceller: cancels orders whose payment timeout fired, reading the order timeouts'
// own stream (orders:timeouts, where order-sim schedules them; not the relay's default stream,
// which holds other producers' tasks) as a consumer group member. On a Redis Cluster it reads
// every bucket stream NS:{b}:stream instead (a stream must share its tasks' slot there), one
// worker per primary, and cancels each order (order:{b}:<id>) on its bucket's node.
// Config: flags > ORDER_CANCELLER_* env > --config JSON > defaults.
#include <spdlog/spdlog.h>

#include "config/consumer_config.h"
#include "config/service_options.h"
#include "consumer/consumer.h"
#include "consumer/consumer_program.h"
#include "log/logging.h"
#include "orders/order_canceller.h"
#include "service/metrics.h"
#include "service/service_process.h"

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

void log_outcomes(const CancellerStats& s) {
  spdlog::info("cancelled={} skipped_paid={} already_cancelled={} missing={} failed={}", s.cancelled,
               s.skipped_paid, s.already_cancelled, s.missing, s.failed);
}

int run_canceller(ServiceProcess& process, const ConsumerConfig& config) {
  std::unique_ptr<OrderCanceller> handler;
  std::unique_ptr<Consumer> consumer;
  Metrics metrics;
  const int exit_code = run_consumer_program(
      process, config, metrics, [&](const RedisLayout& layout, const FatalHandler& fatal) -> Consumer& {
        handler = std::make_unique<OrderCanceller>(layout.cluster ? OrderKeyScheme{true, layout.buckets}
                                                                  : OrderKeyScheme{});
        consumer = std::make_unique<Consumer>(
            process.loop(), config, layout,
            [&handler](const StreamEntry& e, const EntryContext& at, EntryDone done) {
              handler->handle_on(at.library, e, std::move(done));
            },
            orders_library_source());
        consumer->set_on_fatal(fatal);
        consumer->start();
        register_canceller_metrics(metrics, handler->stats(), consumer->stats(), [&consumer] {
          std::string why;
          return consumer->ready(why);
        });
        return *consumer;
      });
  if (handler) log_outcomes(handler->stats());
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  ConsumerConfig config;
  if (auto code = configure_canceller(argc, argv, config)) return *code;
  ServiceProcess process(kCancellerService.program);
  return run_canceller(process, config);
}
