// One worker thread's HTTP server: its own event_base and evhttp, accepting on a duplicate of
// the shared listening socket (evhttp_accept_socket_with_handle closes the descriptor it is
// given when it is freed, so each worker owns one), and its own ApiService (and Producer).
// Limits: body and header sizes, the idle timeout, a deadline for receiving a whole request
// (from its first byte: a slowloris client is dropped), and a cap on the connections this
// worker holds open: one beyond the cap is accepted and shut down at once (counted in
// expiry_api_connections_refused_total), before it is served. With a TLS context every
// connection is a bufferevent_openssl (server side, handshake first) on that shared context; a
// request that reached evhttp over a plain bufferevent (evhttp's fallback when none could be
// made) is refused, never served. Nothing thrown crosses a libevent callback.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <unordered_map>

#include "api/api_metrics.h"
#include "api/api_service.h"
#include "api/http_limits.h"
#include "api/tls_listener.h"

struct bufferevent;
struct evbuffer;
struct evbuffer_cb_info;
struct event;
struct event_base;
struct evhttp;
struct evhttp_bound_socket;
struct evhttp_connection;
struct evhttp_request;

namespace expiry {

class HttpWorker {
 public:
  // Throws Error when libevent cannot set up (no base, no evhttp, dup or accept fails).
  HttpWorker(int index, int listen_fd, ProducerTarget target, std::string dead_stream, const TokenSet& tokens,
             ApiMetrics& metrics, HttpLimits limits, ServerTlsContext tls = nullptr);
  ~HttpWorker();
  HttpWorker(const HttpWorker&) = delete;
  HttpWorker& operator=(const HttpWorker&) = delete;

  // Before run(), from the starting thread: connects the worker's Producer. A Redis that cannot
  // be reached is logged (requests try again); refused credentials throw AuthError.
  void connect_redis();
  // On the worker's thread: serves until stopped.
  void run();
  // From any thread: stop accepting, close idle connections, let the others finish their
  // request (answered with Connection: close) for up to stop_grace, then return from run().
  void request_stop();

 private:
  struct Connection;
  static void on_request(evhttp_request* req, void* self);
  static bufferevent* on_connection(event_base* base, void* self);
  static void on_attach(int fd, short what, void* connection);
  static void on_input(evbuffer* buffer, const evbuffer_cb_info* info, void* connection);
  static void on_closed(evhttp_connection* evcon, void* connection);
  static void on_stop(int fd, short what, void* self);
  static void on_drain_tick(int fd, short what, void* self);
  static void on_deadline_tick(int fd, short what, void* self);

  // A server-side bufferevent without a descriptor yet: TLS (accepting) with tls_, else plain.
  bufferevent* new_bufferevent(event_base* base);
  void serve(evhttp_request* req);
  void reply(evhttp_request* req, const ApiResponse& response);
  void begin_stop();

  int index_;
  HttpLimits limits_;
  ServerTlsContext tls_;  // null: plain HTTP
  ApiMetrics& metrics_;
  ApiService service_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  evhttp_bound_socket* bound_ = nullptr;
  int stop_pipe_[2] = {-1, -1};
  event* stop_event_ = nullptr;
  event* drain_timer_ = nullptr;
  event* deadline_timer_ = nullptr;  // every second: drops requests past request_deadline_seconds
  long long open_ = 0;
  std::unordered_map<bufferevent*, Connection*> connections_;  // every connection of on_connection, until closed
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_deadline_;
};

}  // namespace expiry
