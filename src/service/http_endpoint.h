// The HTTP side of the relay: Prometheus scrapes (/metrics) and health probes (/healthz,
// /readyz), served on the service's own event loop (no extra thread) by a minimal HTTP/1.x
// responder that answers one request per connection and closes it. Whatever HTTP clients
// do, they can neither block the loop nor take the descriptors the Redis connections need.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <string>

#include "io/event_loop.h"

struct bufferevent;
struct evconnlistener;
struct event;
struct sockaddr;

namespace expiry {

// What HTTP clients may hold. (A namespace-level struct, not a nested one, so that it can be
// a default argument: GCC rejects a nested type with member initializers there.)
struct HttpLimits {
  // Concurrent client connections. Prometheus and the probes need a few; 64 leaves room for
  // many scrapers while bounding memory (at most ~24 KiB buffered per connection) and
  // descriptors. Clamped at construction, see HttpEndpoint::kReservedFds.
  int max_connections = 64;
  // From accept to close, for everything: the whole request head must arrive, the answer be
  // written and the connection closed within it, however slowly a client trickles bytes.
  std::chrono::milliseconds request_deadline{5000};
};

// Routes (any query string is ignored):
//   GET /metrics  200, Content-Type kMetricsContentType, body = render_metrics()
//   GET /healthz  200 "ok\n" (answering at all proves the loop is alive)
//   GET /readyz   200 "ready\n" if ready(why), else 503 with why + "\n"
//   other paths 404; methods other than GET/HEAD 405 (with Allow: GET, HEAD).
//   HEAD: the GET's status and headers (Content-Length included), no body.
// If render_metrics or ready throws, the answer is 500 and the error is logged; nothing
// propagates into libevent. Both run on the loop, once per request; they need no locks.
//
// Connections (HTTP/1.0 and 1.1):
// - One request per connection: every answer says "Connection: close" (no keep-alive, no
//   pipelining; a request body is never read). Once the answer is sent we shut down our side
//   and drop what the client still sends until it closes, for at most 1 s (closing with
//   unread input would send RST, which can destroy the answer before the client reads it).
// - Request line and headers up to 8 KiB (else 431), Content-Length up to 1 KiB (else 413; no
//   route takes a body), a malformed head is 400. These are answered without calling us.
// - At most HttpLimits::max_connections at once. At the cap the listener is disabled, so new
//   clients wait in the kernel's accept queue (or their connect times out) and are accepted
//   as connections close: no busy loop, no log line per refused client. While clients hold
//   every slot, scrapes and probes wait with them: the cap protects the loop and the Redis
//   connections' descriptors, not HTTP availability.
// - Each connection is closed request_deadline after it was accepted, answered or not.
// - When accept() fails (EMFILE, ENFILE, ENOBUFS ...) the listener is disabled and re-enabled
//   from a timer, 50 ms doubling to 1 s while it keeps failing; one warning per back-off
//   episode (an episode ends at the next accepted connection), at most one per 10 s.
// Single-threaded like EventLoop; destroy the endpoint before the loop.
class HttpEndpoint {
 public:
  // Prometheus text exposition format 0.0.4.
  static constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
  // Descriptors HTTP clients can never take: max_connections is clamped to the soft
  // RLIMIT_NOFILE (read at construction) minus this, and to at least 1. Besides HTTP, the
  // relay holds 10 (stdio, epoll, timerfd, libevent's pipe pair, the listener, two Redis
  // connections; measured in http_fd_limit_test), one more while a connection is reopened;
  // the rest is headroom for DNS lookups, log files and libraries. The mains raise the soft
  // limit to the hard one first (raise_fd_limit), so the clamp only matters when the hard
  // limit is low.
  static constexpr int kReservedFds = 32;

  using RenderMetrics = std::function<std::string()>;
  // True when ready; otherwise sets why (one line, sent as the 503 body).
  using CheckReady = std::function<bool(std::string& why)>;

  // Listens on bind_address:port ("0.0.0.0", "127.0.0.1", "::", a host name; empty = all
  // interfaces); port 0 picks a free port (see port()). Throws IoError when it cannot listen,
  // e.g. "cannot listen on 0.0.0.0:9100: Address already in use", ConfigError for a port
  // outside 0..65535, std::invalid_argument for limits below 1 (connection, millisecond).
  // Logs the address and the limits in force (info), and a warning if the cap was clamped.
  HttpEndpoint(EventLoop& loop, const std::string& bind_address, int port, RenderMetrics render_metrics,
               CheckReady ready, HttpLimits limits = {});
  // Closes the listener and every open connection; requests in progress get no answer.
  ~HttpEndpoint();
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;
  HttpEndpoint(HttpEndpoint&&) = delete;
  HttpEndpoint& operator=(HttpEndpoint&&) = delete;

  // /healthz answers 503 with why when `healthy` says no (default: always 200 while the loop
  // runs). Set before the loop runs.
  void set_health_check(CheckReady healthy) { healthy_ = std::move(healthy); }

  // The port actually bound (the chosen one when constructed with port 0).
  int port() const { return port_; }
  // The connection cap in force (HttpLimits::max_connections after clamping).
  int max_connections() const { return max_connections_; }
  // Client connections open now.
  int open_connections() const { return static_cast<int>(connections_.size()); }
  // False while the listener is disabled (at the cap, or backing off after accept() failed).
  bool accepting() const { return listening_; }
  // Times accept() failed (the failures, not the warnings; each starts or extends a back-off).
  uint64_t accept_failures() const { return accept_failures_; }

 private:
  struct Connection;
  struct Response;

  static void on_accept(evconnlistener* listener, int fd, sockaddr* addr, int len, void* self) noexcept;
  static void on_accept_error(evconnlistener* listener, void* self) noexcept;
  static void on_read(bufferevent* bev, void* conn) noexcept;
  static void on_write(bufferevent* bev, void* conn) noexcept;
  static void on_event(bufferevent* bev, short what, void* conn) noexcept;
  static void on_timeout(int fd, short what, void* conn) noexcept;
  static void on_reap(int fd, short what, void* self) noexcept;

  void accept_connection(int fd);
  void back_off_accepting(int error);
  // Enables the listener below the cap when no retry is pending, disables it otherwise.
  void update_listener() noexcept;
  void read_request(Connection& conn);
  void send_response(Connection& conn, const Response& response, bool head_only);
  void finish_write(Connection& conn);
  // Frees the connection's socket and timer now and its object after the current callback
  // (which may be its own), then lets the listener accept again if it was at the cap.
  // A no-op on a closed connection.
  void close_connection(Connection& conn) noexcept;
  Response respond(const std::string& method, const std::string& path) const;

  event_base* base_;                      // not owned (the loop's)
  evconnlistener* listener_ = nullptr;    // owned; owns the listening socket
  event* reap_event_ = nullptr;           // owned; frees closed_ on the loop's next pass
  std::list<Connection> connections_;     // open (std::list: moving one to closed_ never allocates)
  std::list<Connection> closed_;          // closed, their objects freed by reap_event_
  Timer accept_retry_;                    // re-enables the listener after accept() failed
  int port_ = 0;
  int max_connections_ = 0;               // after clamping
  std::chrono::milliseconds request_deadline_;
  bool listening_ = true;                 // the listener is enabled
  uint32_t accept_attempt_ = 0;           // accept() failures in a row: the back-off step; 0 = none
  bool episode_warned_ = false;           // this back-off episode was logged
  uint64_t accept_failures_ = 0;          // ever
  uint64_t failures_unreported_ = 0;      // since the last warning
  Clock::time_point last_accept_warning_; // steady clock; meaningful once warned_ever_
  bool warned_ever_ = false;
  RenderMetrics render_metrics_;
  CheckReady ready_;
  CheckReady healthy_;  // optional; empty: /healthz is 200 while the loop answers
};

}  // namespace expiry
