// See http_worker.h.
#include "api/http_worker.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "api/console_views.h"
#include "base/errors.h"
#include "base/text_escape.h"
#include "service/http_request_framer.h"

namespace expiry {

// One accepted connection, from the bufferevent evhttp asks for (on_connection) until evhttp
// closes it (on_closed, its evhttp_connection close callback, called exactly once). The
// connection object is not known when the bufferevent is made, so on_attach finds it on the
// next loop turn (it is the bufferevent's callback argument) and sets the close callback; an
// extra reference keeps the bufferevent valid in between. A callback on its input buffer tells
// whether bytes of a request arrived since the last answer: a connection without them and with
// nothing left to write is idle, and a stopping worker closes it.
// The same callback frames the bytes before evhttp parses them (evhttp alone frames requests
// leniently): it runs as they are added, takes them out, and puts back what the connection's
// HttpRequestFramer passes on.
struct HttpWorker::Connection {
  Connection(HttpWorker* w, const HttpLimits& limits)
      : worker(w), framer(limits.max_header_bytes, static_cast<long long>(limits.max_body_bytes * 2 + 1)) {}
  HttpWorker* worker;
  bufferevent* bev = nullptr;
  HttpRequestFramer framer;
  bool framing = false;  // in on_input: the changes it makes to the buffer call it again
  size_t requests = 0;   // requests served so far
  evbuffer_cb_entry* input_cb = nullptr;
  bool counted = false;                                   // within the cap: counted in open_; else refused
  bool request_bytes = false;                             // bytes arrived since the last answer
  std::chrono::steady_clock::time_point request_started;  // when they began to arrive
  uint64_t inflight = 0;                                  // the number of its call in flight; 0: none
};

// A request whose FCALL is in flight. `req` and `connection` are nulled when the connection
// closes first (on_closed): evhttp frees the request then, or it was detached and freed there.
struct HttpWorker::InFlight {
  evhttp_request* req = nullptr;
  Connection* connection = nullptr;
  DeferredCall call;
};

namespace {

// accept() failing for lack of descriptors or memory: the worker stops accepting for 50 ms,
// doubling to 1 s while it keeps failing (the pending connections wait in the backlog).
constexpr std::chrono::milliseconds kFirstAcceptPause{50};
constexpr std::chrono::milliseconds kLongestAcceptPause{1000};

// evconnlistener's error callback gets the evhttp (its listener's argument), not the worker.
std::mutex g_workers_mutex;
std::unordered_map<const evhttp*, HttpWorker*> g_workers_by_http;  // guarded by g_workers_mutex

const char* method_name(int command) {
  switch (command) {
    case EVHTTP_REQ_GET:
      return "GET";
    case EVHTTP_REQ_POST:
      return "POST";
    case EVHTTP_REQ_HEAD:
      return "HEAD";
    case EVHTTP_REQ_PUT:
      return "PUT";
    case EVHTTP_REQ_DELETE:
      return "DELETE";
    case EVHTTP_REQ_OPTIONS:
      return "OPTIONS";
    case EVHTTP_REQ_TRACE:
      return "TRACE";
    case EVHTTP_REQ_CONNECT:
      return "CONNECT";
    case EVHTTP_REQ_PATCH:
      return "PATCH";
  }
  return "OTHER";
}

std::optional<std::string> header(evhttp_request* req, const char* name) {
  const char* v = evhttp_find_header(evhttp_request_get_input_headers(req), name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace

HttpWorker::HttpWorker(int index, int listen_fd, ProducerTarget target, ApiOptions options, const TokenSet& tokens,
                       ApiMetrics& metrics, HttpLimits limits, ServerTlsContext tls)
    : index_(index),
      limits_(limits),
      tls_(std::move(tls)),
      metrics_(metrics),
      service_(target, tokens, metrics, std::move(options)) {
  base_ = loop_.raw();
  if (limits_.max_inflight > 0 && !target.redis.sentinel.enabled()) {
    // Through Sentinel the Producer follows failovers (and resends a refused write) itself. A
    // cluster is known only once connected: ApiService never defers there.
    RedisConnection::Options o;
    o.endpoint = target.redis;
    o.role = "commands";
    o.client_name = "expiry-api-" + std::to_string(index_);
    redis_ = std::make_unique<RedisConnection>(loop_, o);
    functions_ = std::make_unique<FunctionCaller>(*redis_);
    redis_->set_on_ready([this] { metrics_.async_connection_ready(); });
    redis_->set_on_down([this](const std::string& why) {
      metrics_.async_connection_lost();  // on_down follows only a ready connection
      spdlog::warn("worker {}: async Redis connection lost ({}); task writes block until it is back",
                   index_, escape_text(why));
      service_.forget_producer();  // Redis may have restarted: agree the layout again first
    });
    service_.set_audit_sink([this](std::vector<std::string> argv) {
      if (!redis_->ready()) return false;
      redis_->command(argv, [this](const Reply& reply) {
        if (reply.failed()) {
          spdlog::error("worker {}: an audit record was not written: {}", index_, escape_text(reply.str));
        }
      });
      return true;
    });
    redis_->set_on_handshake_error([this](const Reply& reply) {
      spdlog::error("worker {}: async Redis connection refused: {} (retrying; requests block meanwhile)", index_,
                    escape_text(reply.str));
    });
  }
  http_ = evhttp_new(base_);
  if (http_ == nullptr) throw Error("evhttp_new failed");
  // Every method reaches on_request, so that a wrong one is answered 405 as problem+json.
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
                                        EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
                                        EVHTTP_REQ_PATCH);
  // Bodies up to twice the limit are read and answered 413 as problem+json by the service;
  // beyond that evhttp stops reading and answers its own 413.
  evhttp_set_max_body_size(http_, static_cast<ev_ssize_t>(limits_.max_body_bytes * 2 + 1));
  evhttp_set_max_headers_size(http_, static_cast<ev_ssize_t>(limits_.max_header_bytes));
  evhttp_set_timeout(http_, limits_.timeout_seconds);
  evhttp_set_gencb(http_, &HttpWorker::on_request, this);
  evhttp_set_bevcb(http_, &HttpWorker::on_connection, this);
  const int fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw Error(std::string("dup of the listening socket failed: ") + std::strerror(errno));
  bound_ = evhttp_accept_socket_with_handle(http_, fd);
  if (bound_ == nullptr) {
    close(fd);
    throw Error("evhttp_accept_socket_with_handle failed");
  }
  accept_retry_ = event_new(base_, -1, 0, &HttpWorker::on_accept_retry, this);
  if (accept_retry_ == nullptr) throw Error("cannot set up the accept retry timer");
  {
    std::lock_guard<std::mutex> lock(g_workers_mutex);
    g_workers_by_http[http_] = this;
  }
  evconnlistener_set_error_cb(evhttp_bound_socket_get_listener(bound_), &HttpWorker::on_accept_error);
  if (pipe2(stop_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) throw Error(std::string("pipe: ") + std::strerror(errno));
  stop_event_ = event_new(base_, stop_pipe_[0], EV_READ, &HttpWorker::on_stop, this);
  drain_timer_ = event_new(base_, -1, EV_PERSIST, &HttpWorker::on_drain_tick, this);
  deadline_timer_ = event_new(base_, -1, EV_PERSIST, &HttpWorker::on_deadline_tick, this);
  const timeval second{1, 0};
  if (stop_event_ == nullptr || drain_timer_ == nullptr || deadline_timer_ == nullptr ||
      event_add(stop_event_, nullptr) != 0 || event_add(deadline_timer_, &second) != 0) {
    throw Error("cannot set up the worker's events");
  }
}

HttpWorker::~HttpWorker() {
  // First the async connection, whose pending callbacks are dropped uncalled, and the calls in
  // flight: evhttp_free below frees their requests.
  functions_.reset();
  redis_.reset();
  inflight_.clear();
  if (stop_event_ != nullptr) event_free(stop_event_);
  if (drain_timer_ != nullptr) event_free(drain_timer_);
  if (deadline_timer_ != nullptr) event_free(deadline_timer_);
  if (accept_retry_ != nullptr) event_free(accept_retry_);
  {
    std::lock_guard<std::mutex> lock(g_workers_mutex);
    g_workers_by_http.erase(http_);
  }
  if (http_ != nullptr) evhttp_free(http_);  // closes the connections left, and its listening descriptor
  for (int fd : stop_pipe_) {
    if (fd >= 0) close(fd);
  }
}

void HttpWorker::connect_redis() {
  std::string why;
  if (!service_.connect(why)) spdlog::warn("worker {}: Redis not reachable yet: {}", index_, escape_text(why));
}

void HttpWorker::run() {
  if (redis_) redis_->start();
  event_base_dispatch(base_);
}

void HttpWorker::request_stop() {
  const char byte = 's';
  [[maybe_unused]] const auto n = write(stop_pipe_[1], &byte, 1);
}

void HttpWorker::on_stop(int, short, void* self) {
  try {
    static_cast<HttpWorker*>(self)->begin_stop();
  } catch (...) {
    event_base_loopexit(static_cast<HttpWorker*>(self)->base_, nullptr);
  }
}

void HttpWorker::on_accept_error(evconnlistener* listener, void* http) {
  const int err = errno;  // accept()'s, as libevent leaves it
  HttpWorker* w = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_workers_mutex);
    const auto it = g_workers_by_http.find(static_cast<const evhttp*>(http));
    if (it != g_workers_by_http.end()) w = it->second;
  }
  try {
    if (w == nullptr || w->stopping_) return;
    const bool out_of_resources = err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
    if (out_of_resources) {
      w->accept_pause_ = std::min(kLongestAcceptPause, w->accept_pause_.count() == 0 ? kFirstAcceptPause
                                                                                      : w->accept_pause_ * 2);
      evconnlistener_disable(listener);
      const timeval pause{0, static_cast<suseconds_t>(w->accept_pause_.count() * 1000)};
      event_add(w->accept_retry_, &pause);
    }
    if (const auto held_back = w->accept_log_.allow(Clock::now())) {
      spdlog::warn("worker {}: accept() failed: {}{} ({} more failures held back)", w->index_, std::strerror(err),
                   out_of_resources ? "; accepting paused (up to 1 s at a time) until descriptors are free" : "",
                   *held_back);
    }
  } catch (...) {
    // failed, ignored: a log line cannot be written; the listener stays as it is
  }
}

void HttpWorker::on_accept_retry(int, short, void* self) {
  auto* w = static_cast<HttpWorker*>(self);
  if (w->stopping_ || w->bound_ == nullptr) return;
  evconnlistener_enable(evhttp_bound_socket_get_listener(w->bound_));
}

void HttpWorker::begin_stop() {
  if (stopping_) return;
  stopping_ = true;
  if (accept_retry_ != nullptr) event_del(accept_retry_);
  evhttp_del_accept_socket(http_, bound_);  // closes this worker's listening descriptor
  bound_ = nullptr;
  stop_deadline_ = std::chrono::steady_clock::now() + limits_.stop_grace;
  const timeval tick{0, 20 * 1000};
  event_add(drain_timer_, &tick);
  on_drain_tick(-1, 0, this);
}

void HttpWorker::on_deadline_tick(int, short, void* self) {
  auto* w = static_cast<HttpWorker*>(self);
  const auto too_old = std::chrono::steady_clock::now() - std::chrono::seconds(w->limits_.request_deadline_seconds);
  for (const auto& [bev, c] : w->connections_) {
    if (!c->request_bytes || c->request_started > too_old) continue;
    const int fd = bufferevent_getfd(bev);
    if (fd >= 0) shutdown(fd, SHUT_RDWR);  // evhttp reads end-of-file and closes it
  }
}

void HttpWorker::on_drain_tick(int, short, void* self) {
  auto* w = static_cast<HttpWorker*>(self);
  // Idle connections (no request begun, nothing left to write) are closed now; the others when
  // their answer is written (Connection: close), or at the deadline.
  for (const auto& [bev, c] : w->connections_) {
    if (c->request_bytes || evbuffer_get_length(bufferevent_get_output(bev)) > 0) continue;
    const int fd = bufferevent_getfd(bev);
    int unread = 0;  // bytes the kernel holds that the loop has yet to read: a request begun
    if (fd < 0 || (ioctl(fd, FIONREAD, &unread) == 0 && unread > 0)) continue;
    shutdown(fd, SHUT_RDWR);  // evhttp reads end-of-file and closes it
  }
  if (w->open_ == 0 || std::chrono::steady_clock::now() >= w->stop_deadline_) {
    event_del(w->drain_timer_);
    w->answer_inflight(problem_response(503, "the server is stopping"));
    event_base_loopexit(w->base_, nullptr);
  }
}

bufferevent* HttpWorker::on_connection(event_base* base, void* self) {
  auto* w = static_cast<HttpWorker*>(self);
  bufferevent* bev = nullptr;
  bool listed = false;
  w->accept_pause_ = std::chrono::milliseconds{0};  // accept() works again
  try {
    auto c = std::make_unique<Connection>(w, w->limits_);
    c->counted = w->open_ < w->limits_.max_connections && !w->stopping_;
    bev = w->new_bufferevent(base);
    if (bev == nullptr) return nullptr;
    c->bev = bev;
    w->connections_.emplace(bev, c.get());  // may throw: before anything else refers to `c`
    listed = true;
    c->input_cb = evbuffer_add_cb(bufferevent_get_input(bev), &HttpWorker::on_input, c.get());
    const timeval now{0, 0};
    if (c->input_cb == nullptr || event_base_once(base, -1, EV_TIMEOUT, &HttpWorker::on_attach, c.get(), &now) != 0) {
      throw Error("cannot watch a new connection");
    }
    // Nothing below throws: on_attach owns `c` from here.
    bufferevent_incref(bev);
    if (c->counted) {
      ++w->open_;
      w->metrics_.connection_opened();
    } else {
      w->metrics_.connection_refused();
    }
    c.release();
    return bev;
  } catch (...) {
    if (listed) w->connections_.erase(bev);
    if (bev != nullptr) bufferevent_free(bev);  // its buffer callbacks go with it
    return nullptr;  // evhttp makes its own bufferevent: served, but not counted (with TLS: refused by serve)
  }
}

bufferevent* HttpWorker::new_bufferevent(event_base* base) {
  if (!tls_) return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
  // evhttp sets the accepted descriptor on it later; the handshake begins then.
  SSL* ssl = SSL_new(tls_.get());
  if (ssl == nullptr) return nullptr;
  bufferevent* bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) {
    SSL_free(ssl);
    return nullptr;
  }
  // A client closing without close_notify (most HTTP clients, after their answer) is an
  // end-of-file, not an error.
  bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
  return bev;  // frees `ssl` (and closes the descriptor) when freed
}

void HttpWorker::on_input(evbuffer* input, const evbuffer_cb_info* info, void* connection) {
  auto* c = static_cast<Connection*>(connection);
  if (c->framing || info->n_added == 0) return;
  if (!c->request_bytes) {
    c->request_bytes = true;
    c->request_started = std::chrono::steady_clock::now();
  }
  c->framing = true;
  try {
    // The bytes before the new ones were passed on already; evhttp has yet to consume them.
    const size_t passed = evbuffer_get_length(input) - info->n_added;
    std::unique_ptr<evbuffer, void (*)(evbuffer*)> front(evbuffer_new(), &evbuffer_free);
    std::string received(info->n_added, '\0');
    if (!front || evbuffer_remove_buffer(input, front.get(), passed) != static_cast<int>(passed) ||
        evbuffer_remove(input, received.data(), received.size()) != static_cast<int>(received.size())) {
      throw Error("cannot frame the bytes received");
    }
    std::string out;
    c->framer.feed(received, out);
    if (evbuffer_add_buffer(input, front.get()) != 0 || evbuffer_add(input, out.data(), out.size()) != 0) {
      throw Error("cannot frame the bytes received");
    }
  } catch (...) {
    // Out of memory: nothing half-framed may reach evhttp; the connection is closed unanswered.
    evbuffer_drain(input, evbuffer_get_length(input));
    const int fd = bufferevent_getfd(c->bev);
    if (fd >= 0) shutdown(fd, SHUT_RDWR);
  }
  c->framing = false;
}

void HttpWorker::on_attach(int, short, void* connection) {
  auto* c = static_cast<Connection*>(connection);
  bufferevent_data_cb read_cb = nullptr;
  void* arg = nullptr;
  bufferevent_getcb(c->bev, &read_cb, nullptr, nullptr, &arg);
  bufferevent* bev = c->bev;
  if (read_cb == nullptr || arg == nullptr) {  // evhttp freed the connection already
    on_closed(nullptr, c);
  } else {
    auto* evcon = static_cast<evhttp_connection*>(arg);
    evhttp_connection_set_closecb(evcon, &HttpWorker::on_closed, c);
    if (!c->counted) {
      // Over the cap: evhttp reads end-of-file and closes it, before any request is served.
      const int fd = bufferevent_getfd(bev);
      if (fd >= 0) shutdown(fd, SHUT_RDWR);
    }
  }
  bufferevent_decref(bev);
}

void HttpWorker::on_closed(evhttp_connection*, void* connection) {
  auto* c = static_cast<Connection*>(connection);
  if (c->inflight != 0) {
    const auto it = c->worker->inflight_.find(c->inflight);
    if (it != c->worker->inflight_.end()) {
      InFlight& call = *it->second;
      // A request evhttp detached from its connection (the client closed first) is ours to
      // free; one still attached is freed by evhttp right after this callback.
      if (call.req != nullptr && evhttp_request_get_connection(call.req) == nullptr) evhttp_request_free(call.req);
      call.req = nullptr;
      call.connection = nullptr;
    }
  }
  if (c->counted) {
    --c->worker->open_;
    c->worker->metrics_.connection_closed();
  }
  evbuffer_remove_cb_entry(bufferevent_get_input(c->bev), c->input_cb);  // the bufferevent outlives this call
  c->worker->connections_.erase(c->bev);
  delete c;
}

void HttpWorker::on_request(evhttp_request* req, void* self) {
  try {
    static_cast<HttpWorker*>(self)->serve(req);
  } catch (...) {
    evhttp_send_error(req, 500, nullptr);  // nothing was sent: serve sends last
  }
}

void HttpWorker::serve(evhttp_request* req) {
  evhttp_connection* evcon = evhttp_request_get_connection(req);
  Connection* connection = nullptr;
  if (evcon != nullptr) {
    const auto it = connections_.find(evhttp_connection_get_bufferevent(evcon));
    if (it != connections_.end()) connection = it->second;
  }
  if (tls_ && (evcon == nullptr || bufferevent_openssl_get_ssl(evhttp_connection_get_bufferevent(evcon)) == nullptr)) {
    // evhttp's own plain bufferevent on the TLS port (on_connection could make none): cleartext
    // is never served here.
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    reply(req, problem_response(503, "cannot set up TLS for this connection; try again"));
    return;
  }
  if (connection == nullptr) {
    // evhttp's own bufferevent (on_connection could make none): its requests were not framed.
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    reply(req, problem_response(503, "cannot set up this connection; try again"));
    return;
  }
  if (!connection->counted) {
    // A refused connection whose request arrived before on_attach shut it down.
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    reply(req, problem_response(503, "too many open connections; try again"));
    return;
  }
  const auto& refusal = connection->framer.refusal();
  if (++connection->requests >= connection->framer.refused_request() && refusal) {
    // The request that stands for a framing fault; the connection closes after the answer.
    evhttp_add_header(evhttp_request_get_output_headers(req), "Connection", "close");
    reply(req, problem_response(refusal->status, "malformed request: " + refusal->reason));
    return;
  }
  ApiRequest request;
  request.method = method_name(evhttp_request_get_command(req));
  const char* uri = evhttp_request_get_uri(req);
  std::string target = uri != nullptr ? uri : "/";
  const size_t query_at = target.find('?');
  if (query_at != std::string::npos) {
    request.query = target.substr(query_at + 1);
    target.resize(query_at);
  }
  if (const evhttp_uri* parsed = evhttp_request_get_evhttp_uri(req)) {
    if (const char* path = evhttp_uri_get_path(parsed); path != nullptr && *path != '\0') target = path;
  }
  request.path = target;
  request.authorization = header(req, "Authorization");
  request.content_type = header(req, "Content-Type");
  request.traceparent = header(req, "traceparent");
  evbuffer* in = evhttp_request_get_input_buffer(req);
  request.body.resize(evbuffer_get_length(in));
  if (!request.body.empty()) evbuffer_copyout(in, request.body.data(), request.body.size());

  // Deferred only on a connection the worker tracks (its close callback cancels the call).
  const bool may_defer = redis_ && redis_->ready() && connection != nullptr && connection->inflight == 0;
  auto outcome = service_.begin(request, may_defer);
  if (auto* call = std::get_if<DeferredCall>(&outcome)) {
    if (inflight_.size() < limits_.max_inflight) {
      send_deferred(req, connection, std::move(*call));
      return;
    }
    ApiResponse busy = problem_response(503, "too many task writes are waiting for Redis on this worker; try again");
    busy.headers.push_back({"Retry-After", "1"});
    outcome = service_.finish(*call, std::move(busy));
  }
  reply(req, std::get<ApiResponse>(outcome));
  mark_answered(connection);
}

void HttpWorker::mark_answered(Connection* connection) {
  // Idle again unless the next request's bytes are already buffered (pipelining).
  if (connection != nullptr) {
    connection->request_bytes =
        evbuffer_get_length(bufferevent_get_input(connection->bev)) > 0 || connection->framer.held() > 0;
    connection->request_started = std::chrono::steady_clock::now();
  }
}

void HttpWorker::send_deferred(evhttp_request* req, Connection* connection, DeferredCall call) {
  const uint64_t number = ++calls_sent_;
  auto in_flight = std::make_unique<InFlight>();
  in_flight->req = req;
  in_flight->connection = connection;
  std::vector<std::string> argv = std::move(call.argv);
  in_flight->call = std::move(call);
  inflight_.emplace(number, std::move(in_flight));
  connection->inflight = number;
  try {
    // The callback runs exactly once, on this loop (an IoError reply when the connection is
    // lost or not Ready); the worker outlives redis_, which drops it uncalled when destroyed.
    functions_->fcall(std::move(argv), [this, number](const Reply& reply) { on_redis_reply(number, reply); });
    metrics_.pipelined_call();
  } catch (...) {
    inflight_.erase(number);
    connection->inflight = 0;
    throw;  // on_request answers 500
  }
}

void HttpWorker::on_redis_reply(uint64_t number, const Reply& redis_reply) {
  const auto it = inflight_.find(number);
  if (it == inflight_.end()) return;  // answered already (the end of a stop)
  const std::unique_ptr<InFlight> call = std::move(it->second);
  inflight_.erase(it);
  const ApiResponse response = service_.finish(call->call, redis_reply);  // counted even if nobody waits
  if (call->req == nullptr) return;  // the client left; its request is gone
  call->connection->inflight = 0;
  try {
    reply(call->req, response);
  } catch (...) {
    evhttp_send_error(call->req, 500, nullptr);  // nothing was sent: reply sends last
  }
  mark_answered(call->connection);
}

void HttpWorker::answer_inflight(const ApiResponse& response) {
  auto calls = std::move(inflight_);
  inflight_.clear();
  for (auto& [number, call] : calls) {
    const ApiResponse answer = service_.finish(call->call, response);
    if (call->req == nullptr) continue;
    call->connection->inflight = 0;
    try {
      reply(call->req, answer);
    } catch (...) {
      evhttp_send_error(call->req, 500, nullptr);
    }
  }
}

void HttpWorker::reply(evhttp_request* req, const ApiResponse& response) {
  evkeyvalq* out_headers = evhttp_request_get_output_headers(req);
  if (!response.content_type.empty()) evhttp_add_header(out_headers, "Content-Type", response.content_type.c_str());
  evhttp_add_header(out_headers, "Cache-Control", "no-store");
  evhttp_add_header(out_headers, "X-Content-Type-Options", "nosniff");
  bool has_policy = false;  // the console's files bring their own
  for (const auto& [name, value] : response.headers) {
    evhttp_add_header(out_headers, name.c_str(), value.c_str());
    has_policy = has_policy || name == "Content-Security-Policy";
  }
  if (!has_policy) evhttp_add_header(out_headers, "Content-Security-Policy", kApiContentSecurityPolicy);
  if (stopping_) evhttp_add_header(out_headers, "Connection", "close");
  evbuffer* body = evbuffer_new();
  if (body == nullptr) throw Error("evbuffer_new failed");
  evbuffer_add(body, response.body.data(), response.body.size());
  evhttp_send_reply(req, response.status, status_title(response.status), body);
  evbuffer_free(body);
}

}  // namespace expiry
