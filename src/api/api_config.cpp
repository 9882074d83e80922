// See api_config.h.
#include "api/api_config.h"

#include <thread>

#include "base/errors.h"
#include "base/integers.h"
#include "config/service_options.h"

namespace expiry {

std::vector<OptionSpec> api_option_specs() {
  std::vector<OptionSpec> specs = {
      {"listen", OptionKind::String, "HOST:PORT to serve the HTTP API on ([::1]:PORT for IPv6)", "127.0.0.1:8080"},
      {"tokens_file", OptionKind::String,
       "file of bearer tokens, one `SCOPE TOKEN` a line (scope read, write or admin; # comments)", ""},
      {"tls_listen_cert_file", OptionKind::String,
       "serve HTTPS: this server's certificate chain (PEM); needs --tls-listen-key-file", ""},
      {"tls_listen_key_file", OptionKind::String,
       "serve HTTPS: the private key (PEM) of --tls-listen-cert-file; needs it", ""},
      {"threads", OptionKind::Integer, "worker threads, each with its own Redis connection (0: one per core)", "0", 0,
       256},
      {"max_body_bytes", OptionKind::Integer, "largest request body; larger ones are answered 413", "1048576", 1,
       64 << 20},
      {"max_header_bytes", OptionKind::Integer, "largest request head (request line and headers)", "16384", 1024,
       1 << 20},
      {"http_timeout_s", OptionKind::Integer, "a connection idle, or a request stalled, this long is closed", "30", 1,
       3600},
      {"request_deadline_s", OptionKind::Integer,
       "a request not received whole this long after its first byte is dropped (a slow client's head or body)", "60", 1,
       3600},
      {"max_connections", OptionKind::Integer, "open connections per worker thread; more are closed at once", "4096", 1,
       1 << 20},
      {"max_inflight", OptionKind::Integer,
       "per worker thread: task writes (PUT, DELETE /v1/tasks/{id}) sent pipelined on its async Redis connection "
       "and not yet answered; more are answered 503 at once (0: no async connection, each request waits for its "
       "own round trip)",
       "1024", 0, 1 << 20},
      {"stop_grace_ms", OptionKind::Integer,
       "on SIGTERM/SIGINT: how long requests begun may finish (idle connections close at once)", "5000", 0, 600000},
  };
  specs.push_back({"dead_stream", OptionKind::String,
                   "the dead-letter stream of a single-bucket namespace (default <stream>:dead); bucket streams "
                   "NS:{B}:dead otherwise",
                   ""});
  append_specs(specs, connection_option_specs());
  append_specs(specs, stream_option_specs());
  append_specs(specs, audit_option_specs());
  append_specs(specs, log_option_specs());
  return specs;
}

void parse_listen_address(const std::string& text, std::string& host, int& port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) throw ConfigError("--listen must be HOST:PORT, got '" + text + "'");
  host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const auto p = parse_int64(text.substr(colon + 1));
  if (!p || *p < 0 || *p > 65535) throw ConfigError("--listen needs a port 0..65535, got '" + text + "'");
  port = static_cast<int>(*p);
}

ApiConfig api_config_from(const Settings& s) {
  ApiConfig c;
  parse_listen_address(s.text("listen"), c.listen_host, c.listen_port);
  c.tokens_file = s.text("tokens_file");
  if (c.tokens_file.empty()) throw ConfigError("--tokens-file is required");
  c.tokens = TokenSet::load(c.tokens_file);
  c.tls_listen_cert_file = s.text("tls_listen_cert_file");
  c.tls_listen_key_file = s.text("tls_listen_key_file");
  if (c.tls_listen_cert_file.empty() != c.tls_listen_key_file.empty()) {
    throw ConfigError(
        "--tls-listen-cert-file and --tls-listen-key-file go together: give both to serve HTTPS, or neither for "
        "plain HTTP");
  }
  if (!c.tls_listen_cert_file.empty()) c.tls = make_server_tls_context(c.tls_listen_cert_file, c.tls_listen_key_file);
  c.threads = static_cast<int>(s.integer("threads"));
  if (c.threads == 0) c.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.limits.max_body_bytes = static_cast<size_t>(s.integer("max_body_bytes"));
  c.limits.max_header_bytes = static_cast<size_t>(s.integer("max_header_bytes"));
  c.limits.timeout_seconds = static_cast<int>(s.integer("http_timeout_s"));
  c.limits.request_deadline_seconds = static_cast<int>(s.integer("request_deadline_s"));
  c.limits.max_connections = s.integer("max_connections");
  c.limits.stop_grace = std::chrono::milliseconds(s.integer("stop_grace_ms"));
  c.limits.max_inflight = static_cast<size_t>(s.integer("max_inflight"));
  apply_connection_settings(s, c.target.redis, c.target.ns);
  c.target.buckets = apply_bucket_setting(s);
  std::string group;  // a relay setting the shared config file may hold; unused here
  apply_stream_settings(s, c.target.ns, c.target.stream, group);
  c.dead_stream = s.text("dead_stream");
  c.audit_max_entries = s.integer("audit_max_entries");
  apply_log_settings(s, c.log_format, c.log_level);
  check_log_settings(s, c.log_format, c.log_level);
  return c;
}

ApiOptions ApiConfig::service_options() const {
  ApiOptions o;
  o.max_body_bytes = limits.max_body_bytes;
  o.dead_stream = dead_stream;
  o.audit_max_entries = audit_max_entries;
  return o;
}

}  // namespace expiry
