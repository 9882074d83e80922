// expiry-api: the HTTP scheduling API in front of the Producer (docs/api.md). Config: flags >
// EXPIRY_API_* env > --config JSON file > defaults; the connection options are the other
// programs'.
#include "api/api_config.h"
#include "api/api_server.h"
#include "config/dead_stream_text.h"
#include "config/service_options.h"
#include "log/logging.h"

int main(int argc, char** argv) {
  using namespace expiry;
  const ServiceIdentity identity{"expiry-api", "EXPIRY_API",
                                 "expiry-api: an HTTP API to schedule, read and cancel tasks (docs/api.md).\n"
                                 "Every option can also be set as EXPIRY_API_<NAME> or in the --config JSON file."};
  ApiConfig config;
  const auto configure = [&config](const Settings& settings) -> std::map<std::string, std::string> {
    config = api_config_from(settings);
    const std::string dead_stream = config.dead_stream.empty() ? config.target.stream + ":dead" : config.dead_stream;
    return {{"redis_url", config.target.redis.redacted()},
            {"stream", config.target.stream},
            {"dead_stream", effective_dead_stream_text(config.target.ns, dead_stream, config.target.buckets)}};
  };
  const auto start_logging = [&config] { setup_logging("expiry-api", config.log_format, config.log_level); };
  if (auto code = configure_service(identity, api_option_specs(), argc, argv, configure, start_logging)) return *code;
  return run_api_server(config);
}
