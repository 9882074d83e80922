// The HTTP side of the relay: Prometheus scrapes (/metrics) and health probes (/healthz,
// /readyz), served by libevent's evhttp on the service's own event loop (no extra thread).
#pragma once

#include <functional>
#include <string>

#include "event_loop.h"

struct evhttp;
struct evhttp_request;

namespace expiry {

// Routes (any query string is ignored):
//   GET /metrics  200, Content-Type kMetricsContentType, body = render_metrics()
//   GET /healthz  200 "ok\n" (answering at all proves the loop is alive)
//   GET /readyz   200 "ready\n" if ready(why), else 503 with why + "\n"
//   other paths 404; methods other than GET/HEAD 405 (with Allow: GET, HEAD).
// If render_metrics or ready throws, the answer is 500 and the error is logged; nothing
// propagates into libevent. Both run on the loop, once per request; they need no locks.
// Requests are bounded: small header and body limits and a read/write timeout per connection.
// Single-threaded like EventLoop; destroy the endpoint before the loop.
class HttpEndpoint {
 public:
  // Prometheus text exposition format 0.0.4.
  static constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

  using RenderMetrics = std::function<std::string()>;
  // True when ready; otherwise sets why (one line, sent as the 503 body).
  using CheckReady = std::function<bool(std::string& why)>;

  // Listens on bind_address:port ("0.0.0.0", "127.0.0.1", "::", a host name; empty = all
  // interfaces); port 0 picks a free port (see port()). Throws IoError when it cannot listen,
  // e.g. "cannot listen on 0.0.0.0:9100: Address already in use", and ConfigError for a port
  // outside 0..65535.
  HttpEndpoint(EventLoop& loop, const std::string& bind_address, int port, RenderMetrics render_metrics,
               CheckReady ready);
  // Closes the listener and every open connection; requests in progress get no answer.
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;
  HttpEndpoint(HttpEndpoint&&) = delete;
  HttpEndpoint& operator=(HttpEndpoint&&) = delete;

  // The port actually bound (the chosen one when constructed with port 0).
  int port() const { return port_; }

 private:
  struct Response;
  static void handle_request(evhttp_request* req, void* self) noexcept;
  Response respond(int method, const std::string& path) const;

  evhttp* http_ = nullptr;  // owned; owns the listening socket and the client connections
  int port_ = 0;
  RenderMetrics render_metrics_;
  CheckReady ready_;
};

}  // namespace expiry
