// order-canceller: cancels orders whose payment timeout fired, reading the order timeouts'
// own stream (orders:timeouts, where order-sim schedules them; not the relay's default stream,
// which holds other producers' tasks) as a consumer group member. On a Redis Cluster it reads
// every bucket stream NS:{b}:stream instead (a stream must share its tasks' slot there), one
// worker per primary, and cancels each order (order:{b}:<id>) on its bucket's node.
// Config: flags > ORDER_CANCELLER_* env > --config JSON > defaults.
#include <spdlog/spdlog.h>

#include "config/consumer_config.h"
#include "config/logging.h"
#include "config/service_options.h"
#include "consumer/cluster_consumer.h"
#include "consumer/layout_probe.h"
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

void log_outcomes(const CancellerStats& s) {
  spdlog::info("cancelled={} skipped_paid={} already_cancelled={} missing={} failed={}", s.cancelled,
               s.skipped_paid, s.already_cancelled, s.missing, s.failed);
}

// The canceller once the layout is known: a StreamConsumer on one Redis, a ClusterConsumer on a
// cluster. Exactly one of the consumers exists.
struct Canceller {
  std::unique_ptr<OrderCanceller> handler;
  std::unique_ptr<StreamConsumer> single;
  std::unique_ptr<ClusterConsumer> cluster;

  bool ready(std::string& why) const {
    if (single) return single->ready(why);
    if (cluster) return cluster->ready(why);
    why = "starting";
    return false;
  }
  const ConsumerStats& stats() const { return single ? single->stats() : cluster->stats(); }
  void stop(std::function<void()> done) {
    if (single) single->stop(std::move(done));
    if (cluster) cluster->stop(std::move(done));
  }
};

void start_single(EventLoop& loop, const ConsumerConfig& config, Canceller& c,
                  const std::function<void(const std::string&)>& fatal) {
  c.single = std::make_unique<StreamConsumer>(
      loop, config, [&c](const StreamEntry& e, StreamConsumer::Done done) { c.handler->handle(e, std::move(done)); });
  c.handler = std::make_unique<OrderCanceller>(c.single->commands());
  c.single->set_on_commands_ready([&c] { c.handler->load_library(); });
  c.single->set_on_fatal(fatal);
  c.single->start();
}

void start_cluster(EventLoop& loop, const ConsumerConfig& config, int buckets, Canceller& c,
                   const std::function<void(const std::string&)>& fatal) {
  c.handler = std::make_unique<OrderCanceller>(OrderKeyScheme{true, buckets});
  ClusterConsumer::Options options;
  options.buckets = buckets;
  options.handler_library = orders_library_source();
  c.cluster = std::make_unique<ClusterConsumer>(
      loop, config, options, [&c](const StreamEntry& e, const BucketContext& at, EntryDone done) {
        c.handler->handle_on(at.library, e, std::move(done));
      });
  c.cluster->set_on_fatal(fatal);
  c.cluster->start();
}

int run_canceller(ServiceProcess& process, const ConsumerConfig& config) {
  EventLoop& loop = process.loop();
  Canceller canceller;
  Metrics metrics;
  if (!process.serve_http(config.metrics_bind, config.metrics_port, [&] { return metrics.render(); },
                          [&](std::string& why) { return canceller.ready(why); })) {
    return ServiceProcess::kExitConfigError;
  }
  int exit_code = 0;
  const auto fatal = [&](const std::string& why) {
    spdlog::critical("{}", why);
    exit_code = ServiceProcess::kExitConfigError;
    loop.stop();
  };
  LayoutProbe probe(loop, config);
  probe.start(
      [&](const ConsumerLayout& layout) {
        if (layout.cluster) {
          spdlog::info("{} is a Redis Cluster: reading the {} bucket streams of namespace {}", config.redis.where(),
                       layout.buckets, config.ns);
          start_cluster(loop, config, layout.buckets, canceller, fatal);
        } else {
          start_single(loop, config, canceller, fatal);
        }
        register_canceller_metrics(metrics, canceller.handler->stats(), canceller.stats(),
                                   [&canceller] {
                                     std::string why;
                                     return canceller.ready(why);
                                   });
      },
      fatal);
  process.on_stop_signal([&] {
    if (canceller.handler) {
      canceller.stop([&] { loop.stop(); });
    } else {
      loop.stop();  // still finding out the layout: nothing read yet
    }
  });
  process.run();
  if (canceller.handler) log_outcomes(canceller.handler->stats());
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  ConsumerConfig config;
  if (auto code = configure_canceller(argc, argv, config)) return *code;
  ServiceProcess process(kCancellerService.program);
  return run_canceller(process, config);
}
