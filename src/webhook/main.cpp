// expiry-webhook: delivers fired tasks as signed HTTP webhooks (docs/webhooks.md). A consumer
// group member (consumer/consumer.h) whose handler is the WebhookDispatcher, over libcurl's
// multi interface on the same libevent loop.
// Config: --config FILE is the webhook JSON (endpoints, secrets, allow_private, retries); the
// consumer's connection options as flags or EXPIRY_WEBHOOK_* env.
#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
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
#include "webhook/dispatcher.h"
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

// The consumer's options without its retry policy, which the webhook JSON sets: --help lists
// only options that work (and a flag for one of them is refused as unknown).
std::vector<OptionSpec> webhook_option_specs() {
  std::vector<OptionSpec> specs = consumer_option_specs();
  specs.erase(std::remove_if(specs.begin(), specs.end(),
                             [](const OptionSpec& o) {
                               return o.name == "max_deliveries" || o.name == "retry_base_ms" ||
                                      o.name == "retry_max_ms";
                             }),
              specs.end());
  return specs;
}

int run_webhook(ServiceProcess& process, const ConsumerConfig& config, const WebhookConfig& hooks) {
  Metrics metrics;
  auto& latency = metrics.histogram("expiry_webhook_delivery_latency_seconds",
                                    "From a task's due time to its delivery (2xx), in seconds.",
                                    lateness_buckets_seconds());
  HttpClient client(process.loop(), AddressPolicy(hooks.allow_private));
  WebhookDispatcher dispatcher(hooks, client, [&latency](double s) { observe(latency, s); });
  std::unique_ptr<Consumer> consumer;
  return run_consumer_program(
      process, config, metrics, [&](const RedisLayout& layout, const FatalHandler& fatal) -> Consumer& {
        consumer = std::make_unique<Consumer>(
            process.loop(), config, layout, [&dispatcher](const StreamEntry& e, const EntryContext&, EntryDone done) {
              dispatcher.handle(e, std::move(done));
            });
        consumer->set_max_unsettled(dispatcher.capacity());
        consumer->set_on_fatal(fatal);
        consumer->start();
        register_webhook_metrics(metrics, dispatcher, consumer->stats(), [&consumer] {
          std::string why;
          return consumer->ready(why);
        });
        return *consumer;
      });
}

}  // namespace

int main(int argc, char** argv) {
  auto config_path = take_config_flag(argc, argv);
  // EXPIRY_WEBHOOK_CONFIG names the webhook JSON too (--help says so), never a settings file.
  if (const char* env = std::getenv("EXPIRY_WEBHOOK_CONFIG"); !config_path && env != nullptr && *env != '\0') {
    config_path = env;
  }
  ::unsetenv("EXPIRY_WEBHOOK_CONFIG");
  WebhookConfig hooks;
  ConsumerConfig config;
  const auto configure = [&](const Settings& settings) -> std::map<std::string, std::string> {
    if (!config_path) throw ConfigError("--config FILE (the webhook JSON) is required");
    hooks = load_webhook_config(*config_path);
    // The retry policy is the webhook JSON's (max_attempts, retry_base_ms, retry_max_ms).
    config = consumer_config_from(settings);
    config.max_deliveries = hooks.max_attempts;
    config.retry.initial = hooks.retry_base;
    config.retry.max = hooks.retry_max;
    setup_logging("expiry-webhook", config.log_format, config.log_level);
    return {{"max_deliveries", std::to_string(config.max_deliveries) + " (max_attempts)"},
            {"retry_base_ms", std::to_string(config.retry.initial.count())},
            {"retry_max_ms", std::to_string(config.retry.max.count())},
            {"redis_url", config.redis.redacted()},
            {"stream", config.stream},
            {"consumer", config.consumer},
            {"endpoints", std::to_string(hooks.endpoints.size())}};
  };
  if (auto code = configure_service(kWebhookService, webhook_option_specs(), argc, argv, configure, {})) return *code;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    std::cerr << "expiry-webhook: curl_global_init failed\n";
    return 1;
  }
  int code = 0;
  {
    ServiceProcess process(kWebhookService.program);
    code = run_webhook(process, config, hooks);
  }
  curl_global_cleanup();
  return code;
}
