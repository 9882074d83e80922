// expiry-webhook: delivers fired tasks as signed HTTP webhooks (docs/webhooks.md). A consumer
// group member (consumer/consumer.h) whose handler is the WebhookDispatcher, over libcurl's
// multi interface on the same libevent loop.
// Config: --config FILE is the webhook JSON (endpoints, secrets, allow_private, retries); the
// consumer's connection options and --drain-timeout as flags or EXPIRY_WEBHOOK_* env.
// --check-config also resolves each endpoint's host and shows the address policy's verdict on
// each address (endpoint_check.h); an endpoint that can never be delivered to fails it.
#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "base/errors.h"
#include "config/consumer_config.h"
#include "config/service_options.h"
#include "consumer/consumer.h"
#include "consumer/consumer_program.h"
#include "log/logging.h"
#include "service/metrics.h"
#include "service/service_process.h"
#include "webhook/catch_up_count.h"
#include "webhook/dispatcher.h"
#include "webhook/drain_deadline.h"
#include "webhook/drain_timeout.h"
#include "webhook/endpoint_check.h"
#include "webhook/host_resolver.h"
#include "webhook/http_client.h"
#include "webhook/webhook_config.h"
#include "webhook/webhook_metrics.h"

namespace {

using namespace expiry;

const ServiceIdentity kWebhookService{
    "expiry-webhook", "EXPIRY_WEBHOOK",
    "expiry-webhook: delivers fired tasks as signed HTTP webhooks.\n"
    "--config FILE: the webhook JSON (docs/webhooks.md). The connection options below can also be set as\n"
    "EXPIRY_WEBHOOK_<NAME>."};

// Takes "--config FILE" / "--config=FILE" out of argv (the rest goes to the consumer's options):
// the webhook JSON, not the settings file the other programs' --config names.
std::optional<std::string> take_config_flag(int& argc, char** argv) {
  std::optional<std::string> path;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      path = argv[++i];
    } else if (std::strncmp(argv[i], "--config=", 9) == 0) {
      path = argv[i] + 9;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  return path;
}

// Whether the command line asks for --check-config (configure_service parses it too; the
// endpoint check below needs to know before it returns).
bool wants_check_config(int argc, char** argv) {
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--check-config") {
      check = true;
    } else if (arg.rfind("--check-config=", 0) == 0) {
      const std::string value = arg.substr(15);
      check = !(value == "false" || value == "0" || value == "no" || value == "off");
    }
  }
  return check;
}

// --check-config's endpoint check: each endpoint, the addresses its host resolves to and the
// policy's verdict on each, on stdout. Throws ConfigError naming every endpoint that can never
// be delivered to (no address, or every address refused): configure_service then exits 2.
void check_endpoints(const WebhookConfig& hooks) {
  const AddressPolicy policy(hooks.allow_private);
  std::string never;
  std::cout << "endpoints (host resolved now; each address as the address policy judges it):\n";
  for (const auto& [name, endpoint] : hooks.endpoints) {
    const EndpointVerdict verdict = check_endpoint(endpoint, policy, resolve_host);
    std::cout << describe_verdict(verdict);
    if (!verdict.deliverable()) never += (never.empty() ? "" : "; ") + name + ": " + verdict.why_not();
  }
  std::cout.flush();
  if (!never.empty()) {
    throw ConfigError("endpoints that can never be delivered to (every task for them would be dead-lettered): " +
                      never);
  }
}

// The consumer's options without its retry policy, which the webhook JSON sets: --help lists
// only options that work (and a flag for one of them is refused as unknown); and --drain-timeout.
std::vector<OptionSpec> webhook_option_specs() {
  std::vector<OptionSpec> specs = consumer_option_specs();
  specs.erase(std::remove_if(specs.begin(), specs.end(),
                             [](const OptionSpec& o) {
                               return o.name == "max_deliveries" || o.name == "retry_base_ms" ||
                                      o.name == "retry_max_ms";
                             }),
              specs.end());
  specs.push_back(drain_timeout_option_spec());
  return specs;
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int run_webhook(ServiceProcess& process, const ConsumerConfig& config, const WebhookConfig& hooks,
                std::chrono::milliseconds drain_timeout) {
  const int64_t start_ms = wall_ms();
  Metrics metrics;
  auto& latency = metrics.histogram("expiry_webhook_delivery_latency_seconds",
                                    "From a task's due time to its delivery (2xx), in seconds.",
                                    lateness_buckets_seconds());
  HttpClient client(process.loop(), AddressPolicy(hooks.allow_private));
  WebhookDispatcher dispatcher(hooks, client, [&latency](double s) { observe(latency, s); });
  std::unique_ptr<Consumer> consumer;
  std::unique_ptr<CatchUpCount> catch_up;
  DrainDeadline drain(
      process.loop(), drain_timeout,
      [&] { return DrainDeadline::Held{dispatcher.held(), client.in_flight()}; },
      "consumer group " + config.group);
  // Beside run_consumer_program's own stop handler (which stops the consumer's reads and lets
  // what it holds settle): both run on the signal, and whichever ends first stops the loop.
  process.on_stop_signal([&drain] { drain.start(); });
  const int code = run_consumer_program(
      process, config, metrics, [&](const RedisLayout& layout, const FatalHandler& fatal) -> Consumer& {
        const std::string where = layout.cluster ? "the " + std::to_string(layout.buckets) +
                                                       " bucket streams of namespace " + config.ns
                                                 : config.stream;
        // Quiet this long with nothing held: the reads found nothing (a blocking read waits `block`).
        const auto quiet = std::max<std::chrono::milliseconds>(std::chrono::seconds(2), 2 * config.block);
        catch_up = std::make_unique<CatchUpCount>(process.loop(), hooks, where, start_ms, quiet, [&] {
          std::string why;
          return dispatcher.held() == 0 && consumer && consumer->ready(why);
        });
        consumer = std::make_unique<Consumer>(
            process.loop(), config, layout,
            [&dispatcher, &catch_up](const StreamEntry& e, const EntryContext&, EntryDone done) {
              catch_up->note(e);
              dispatcher.handle(e, std::move(done));
            });
        consumer->set_max_unsettled(dispatcher.capacity());
        consumer->set_on_fatal(fatal);
        consumer->start();
        catch_up->start();
        register_webhook_metrics(metrics, dispatcher, consumer->stats(), [&consumer] {
          std::string why;
          return consumer->ready(why);
        });
        return *consumer;
      });
  drain.report();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  auto config_path = take_config_flag(argc, argv);
  // EXPIRY_WEBHOOK_CONFIG names the webhook JSON too (--help says so), never a settings file.
  if (const char* env = std::getenv("EXPIRY_WEBHOOK_CONFIG"); !config_path && env != nullptr && *env != '\0') {
    config_path = env;
  }
  ::unsetenv("EXPIRY_WEBHOOK_CONFIG");
  const bool check_only = wants_check_config(argc, argv);
  WebhookConfig hooks;
  ConsumerConfig config;
  std::chrono::milliseconds drain_timeout{0};
  const auto configure = [&](const Settings& settings) -> std::map<std::string, std::string> {
    if (!config_path) throw ConfigError("--config FILE (the webhook JSON) is required");
    hooks = load_webhook_config(*config_path);
    // The retry policy is the webhook JSON's (max_attempts, retry_base_ms, retry_max_ms).
    config = consumer_config_from(settings);
    config.max_deliveries = hooks.max_attempts;
    config.retry.initial = hooks.retry_base;
    config.retry.max = hooks.retry_max;
    drain_timeout = drain_timeout_from(settings);
    if (check_only) check_endpoints(hooks);
    setup_logging("expiry-webhook", config.log_format, config.log_level);
    return {{"max_deliveries", std::to_string(config.max_deliveries) + " (max_attempts)"},
            {"retry_base_ms", std::to_string(config.retry.initial.count())},
            {"retry_max_ms", std::to_string(config.retry.max.count())},
            {"redis_url", config.redis.redacted()},
            {"stream", config.stream},
            {"consumer", config.consumer},
            {"endpoints", std::to_string(hooks.endpoints.size())},
            {kDrainTimeoutOption, drain_timeout_text(drain_timeout)}};
  };
  if (auto code = configure_service(kWebhookService, webhook_option_specs(), argc, argv, configure, {})) return *code;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    std::cerr << "expiry-webhook: curl_global_init failed\n";
    return 1;
  }
  int code = 0;
  {
    ServiceProcess process(kWebhookService.program);
    code = run_webhook(process, config, hooks, drain_timeout);
  }
  curl_global_cleanup();
  return code;
}
