// expiry-api's settings: where it listens, its tokens file, threads and HTTP limits, plus the
// connection options every program shares (config/service_options.h), resolved flag > env
// EXPIRY_API_* > --config JSON file > default. Pure but for reading the tokens file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "api/api_options.h"
#include "api/http_limits.h"
#include "api/tls_listener.h"
#include "api/tokens.h"
#include "config/settings.h"
#include "producer/producer_target.h"

namespace expiry {

struct ApiConfig {
  std::string listen_host = "127.0.0.1";
  int listen_port = 8080;
  std::string tokens_file;
  // HTTPS served by expiry-api itself: both files or neither; `tls` is their loaded context
  // (null: plain HTTP).
  std::string tls_listen_cert_file;
  std::string tls_listen_key_file;
  ServerTlsContext tls;
  TokenSet tokens;
  int threads = 1;
  HttpLimits limits;
  ProducerTarget target;
  std::string dead_stream;  // empty: <stream>:dead
  long long audit_max_entries = 0;

  // What each worker's ApiService is given.
  ApiOptions service_options() const;
  std::string log_format = "text";
  std::string log_level = "info";
};

std::vector<OptionSpec> api_option_specs();

// Throws ConfigError naming the setting (or the tokens file's line) that is wrong.
ApiConfig api_config_from(const Settings& settings);

// "HOST:PORT", "[IPV6]:PORT" or ":PORT" (all interfaces); throws ConfigError.
void parse_listen_address(const std::string& text, std::string& host, int& port);

}  // namespace expiry
