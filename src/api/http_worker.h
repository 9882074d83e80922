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
//
// Task writes (PUT and DELETE /v1/tasks/{id}) on one Redis go out on the worker's own async
// connection (io/redis_connection.h, on this worker's loop), many per round trip: the request is
// answered from the reply callback. evhttp reads nothing more from a connection until its
// request is answered, so each connection has at most one call in flight; the worker keeps them
// by call number, never by pointer. A client that leaves meanwhile (its connection's close
// callback) cancels its call: the reply is then only counted (a request evhttp detached from the
// connection is freed there). A lost Redis connection answers every call in flight 503 and
// reconnects with backoff; until it is Ready again, and on a cluster or through Sentinel,
// requests take the blocking Producer path.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <unordered_map>

#include "api/api_metrics.h"
#include "api/api_service.h"
#include "api/http_limits.h"
#include "api/tls_listener.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "io/redis_connection.h"
#include "log/log_limiter.h"

struct bufferevent;
struct evbuffer;
struct evbuffer_cb_info;
struct event;
struct event_base;
struct evhttp;
struct evhttp_bound_socket;
struct evhttp_connection;
struct evhttp_request;
struct evconnlistener;

namespace expiry {

class HttpWorker {
 public:
  // Throws Error when libevent cannot set up (no base, no evhttp, dup or accept fails).
  HttpWorker(int index, int listen_fd, ProducerTarget target, ApiOptions options, const TokenSet& tokens,
             ApiMetrics& metrics, HttpLimits limits, ServerTlsContext tls = nullptr);
  ~HttpWorker();
  HttpWorker(const HttpWorker&) = delete;
  HttpWorker& operator=(const HttpWorker&) = delete;

  // Before run(), from the starting thread: connects the worker's Producer. A Redis that cannot
  // be reached is logged (requests try again); refused credentials throw AuthError.
  void connect_redis();
  // On the worker's thread: starts the async Redis connection, serves until stopped.
  void run();
  // From any thread: stop accepting, close idle connections, let the others finish their
  // request (answered with Connection: close) for up to stop_grace, then return from run().
  void request_stop();

 private:
  struct Connection;
  struct InFlight;
  static void on_request(evhttp_request* req, void* self);
  static bufferevent* on_connection(event_base* base, void* self);
  static void on_attach(int fd, short what, void* connection);
  static void on_input(evbuffer* buffer, const evbuffer_cb_info* info, void* connection);
  static void on_closed(evhttp_connection* evcon, void* connection);
  static void on_stop(int fd, short what, void* self);
  static void on_drain_tick(int fd, short what, void* self);
  static void on_deadline_tick(int fd, short what, void* self);
  // accept() failed (evconnlistener's error callback; its argument is our evhttp): out of
  // descriptors or memory pauses accepting with backoff instead of retrying at once, forever.
  static void on_accept_error(evconnlistener* listener, void* http);
  static void on_accept_retry(int fd, short what, void* self);

  // A server-side bufferevent without a descriptor yet: TLS (accepting) with tls_, else plain.
  bufferevent* new_bufferevent(event_base* base);
  void serve(evhttp_request* req);
  void reply(evhttp_request* req, const ApiResponse& response);
  void begin_stop();
  // Sends `call` on the async connection; the request is answered from on_redis_reply.
  void send_deferred(evhttp_request* req, Connection* connection, DeferredCall call);
  void on_redis_reply(uint64_t number, const Reply& reply);
  // Answers every call in flight with `response` (at the end of a stop).
  void answer_inflight(const ApiResponse& response);
  // `connection` has been answered: idle again unless the next request's bytes are buffered.
  static void mark_answered(Connection* connection);

  int index_;
  HttpLimits limits_;
  ServerTlsContext tls_;  // null: plain HTTP
  ApiMetrics& metrics_;
  ApiService service_;
  EventLoop loop_;                                // owns base_; destroyed after every member below
  event_base* base_ = nullptr;                    // loop_'s
  std::unique_ptr<RedisConnection> redis_;        // the async connection; null: every request blocks
  std::unique_ptr<FunctionCaller> functions_;     // FCALLs on redis_
  std::unordered_map<uint64_t, std::unique_ptr<InFlight>> inflight_;  // calls sent, by number
  uint64_t calls_sent_ = 0;                       // numbers the calls
  evhttp* http_ = nullptr;
  evhttp_bound_socket* bound_ = nullptr;
  int stop_pipe_[2] = {-1, -1};
  event* stop_event_ = nullptr;
  event* drain_timer_ = nullptr;
  event* deadline_timer_ = nullptr;  // every second: drops requests past request_deadline_seconds
  event* accept_retry_ = nullptr;    // re-enables accepting after a pause (on_accept_error)
  std::chrono::milliseconds accept_pause_{0};      // the last pause; 0 after an accept works
  LogLimiter accept_log_{std::chrono::seconds(10)};  // at most one accept warning per 10 s
  long long open_ = 0;
  std::unordered_map<bufferevent*, Connection*> connections_;  // every connection of on_connection, until closed
  bool stopping_ = false;
  std::chrono::steady_clock::time_point stop_deadline_;
};

}  // namespace expiry
