// order-webhook: the demo order service's webhook endpoint. expiry-webhook POSTs each payment
// timeout to http://HOST:PORT/orders/timeout; this verifies the signature and cancels the
// order if it is still unpaid (order_webhook.h). One thread: a libevent evhttp server whose
// request callback runs the blocking orders_v1 call on one Redis connection (opened again after
// a failure). SIGTERM/SIGINT stop it. Exit 0 when stopped, 2 for bad input, 3 when it cannot
// listen ("cannot listen"), 1 when libevent cannot be set up.
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "base/errors.h"
#include "base/text_escape.h"
#include "config/help_formatter.h"
#include "config/redis_url.h"
#include "io/sync/sync_connection.h"
#include "orders/order_webhook.h"
#include "orders/orders_library.h"
#include "webhook/webhook_config.h"

namespace {

using namespace expiry;

struct Server {
  RedisEndpoint redis;
  std::vector<std::string> keys;
  std::unique_ptr<SyncConnection> connection;  // null until first needed, and after a failure
  event_base* base = nullptr;
};

const SyncConnection::FunctionLibrary& orders_library() {
  static const SyncConnection::FunctionLibrary library{orders_library_source(), "FUNCTION LOAD orders_v1"};
  return library;
}

// The FCALL on the server's connection; a connection failure or refusal becomes an IoError
// reply (503), and the next request connects again.
Reply cancel_on(Server& s, const std::vector<std::string>& argv) {
  try {
    if (!s.connection) s.connection = std::make_unique<SyncConnection>(s.redis);
    return s.connection->fcall(argv, orders_library());
  } catch (const std::exception& e) {
    s.connection.reset();
    Reply r;
    r.type = Reply::Type::IoError;
    r.str = e.what();
    return r;
  }
}

std::optional<std::string> header(evhttp_request* req, const char* name) {
  const char* v = evhttp_find_header(evhttp_request_get_input_headers(req), name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

void on_request(evhttp_request* req, void* arg) {
  try {
    auto& s = *static_cast<Server*>(arg);
    WebhookRequest request;
    request.method = evhttp_request_get_command(req) == EVHTTP_REQ_POST ? "POST" : "OTHER";
    const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
    const char* path = uri != nullptr ? evhttp_uri_get_path(uri) : nullptr;
    request.path = path != nullptr ? path : "";
    request.id = header(req, "webhook-id");
    request.timestamp = header(req, "webhook-timestamp");
    request.signature = header(req, "webhook-signature");
    evbuffer* in = evhttp_request_get_input_buffer(req);
    request.body.resize(evbuffer_get_length(in));
    if (!request.body.empty()) evbuffer_copyout(in, request.body.data(), request.body.size());
    const auto now_s =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const WebhookAnswer answer = handle_order_webhook(s.keys, request, now_s,
                                                      [&s](const std::vector<std::string>& argv) { return cancel_on(s, argv); });
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/plain");
    evbuffer* body = evbuffer_new();
    if (body == nullptr) {
      evhttp_send_error(req, 500, nullptr);
      return;
    }
    evbuffer_add(body, answer.body.data(), answer.body.size());
    evhttp_send_reply(req, answer.status, nullptr, body);
    evbuffer_free(body);
  } catch (...) {
    evhttp_send_error(req, 500, nullptr);  // nothing was sent yet: the reply is sent last
  }
}

void on_signal(evutil_socket_t, short, void* base) { event_base_loopexit(static_cast<event_base*>(base), nullptr); }

// The whsec_ secret in `path` (surrounding whitespace ignored), decoded. Throws ConfigError.
std::string read_secret(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const auto first = s.find_first_not_of(" \t\r\n");
  const auto last = s.find_last_not_of(" \t\r\n");
  s = first == std::string::npos ? "" : s.substr(first, last - first + 1);
  std::string error;
  auto key = decode_webhook_secret(s, &error);
  if (!key) throw ConfigError(path + ": " + error);
  return *key;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"order-webhook: receives expiry-webhook's payment-timeout webhooks (POST /orders/timeout),\n"
               "verifies their signature and cancels the order if it is still unpaid."};
  std::string listen = "127.0.0.1:8090", secret_file, redis_url = "redis://127.0.0.1:6379";
  app.add_option("--listen", listen, "HOST:PORT to listen on")->envname("ORDER_WEBHOOK_LISTEN");
  app.add_option("--secret-file", secret_file, "file holding the endpoint's whsec_ secret")
      ->required()
      ->envname("ORDER_WEBHOOK_SECRET_FILE");
  app.add_option("--redis-url", redis_url, "Redis holding the orders")->envname("ORDER_WEBHOOK_REDIS_URL");
  use_readable_help(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  Server server;
  std::string host;
  int port = 0;
  try {
    server.redis = parse_redis_url(redis_url);
    server.keys.push_back(read_secret(secret_file));
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos) throw ConfigError("--listen must be HOST:PORT");
    host = listen.substr(0, colon);
    const std::string port_text = listen.substr(colon + 1);
    if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port_text) > 65535) {
      throw ConfigError("--listen: bad port " + port_text);
    }
    port = std::stoi(port_text);
  } catch (const Error& e) {
    std::cerr << "order-webhook: configuration error: " << escape_text(e.what()) << "\n";
    return 2;
  }

  signal(SIGPIPE, SIG_IGN);
  event_base* base = event_base_new();
  evhttp* http = base != nullptr ? evhttp_new(base) : nullptr;
  event* term = base != nullptr ? evsignal_new(base, SIGTERM, on_signal, base) : nullptr;
  event* intr = base != nullptr ? evsignal_new(base, SIGINT, on_signal, base) : nullptr;
  if (http == nullptr || term == nullptr || intr == nullptr || event_add(term, nullptr) != 0 ||
      event_add(intr, nullptr) != 0) {
    std::cerr << "order-webhook: cannot set up libevent\n";
    return 1;
  }
  server.base = base;
  evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE);
  evhttp_set_max_body_size(http, 64 * 1024);
  evhttp_set_timeout(http, 30);
  evhttp_set_gencb(http, on_request, &server);
  if (evhttp_bind_socket_with_handle(http, host.c_str(), static_cast<uint16_t>(port)) == nullptr) {
    std::cerr << "order-webhook: cannot listen on " << escape_text(listen) << "\n";
    return 3;
  }
  spdlog::info("order-webhook listening on http://{}{} (Redis {})", listen, kOrderWebhookPath, server.redis.redacted());
  event_base_dispatch(base);
  spdlog::info("order-webhook stopped");
  event_free(term);
  event_free(intr);
  evhttp_free(http);
  event_base_free(base);
  return 0;
}
