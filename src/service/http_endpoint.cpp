// The HTTP/1.x responder behind HttpEndpoint; see http_endpoint.h for the routes and contracts.
// We own the accept loop (an evconnlistener with an error callback) and each connection (a
// bufferevent plus a deadline timer), because libevent 2.1's evhttp can neither cap its
// connections nor bound a whole request in time, and without an error callback the listener
// retries a failing accept() forever, logging each time.
#include "service/http_endpoint.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <new>
#include <stdexcept>

#include "base/errors.h"
#include "config/backoff.h"
#include "service/fd_limit.h"
#include "service/http_request.h"

namespace expiry {

namespace {

using namespace std::chrono_literals;

constexpr size_t kMaxHeadersBytes = 8 * 1024;  // request line + headers
constexpr long long kMaxBodyBytes = 1024;       // Content-Length; no route takes a body
constexpr int kListenBacklog = 64;              // connections the kernel queues (also while we are at the cap)
// After the answer is sent: how long we read and drop what the client still sends, until it
// closes (bounded by the deadline too). Closing with unread input would make the kernel send
// RST, which can destroy the answer before the client reads it.
constexpr std::chrono::milliseconds kLingerTime = 1s;
// accept() failing: the listener pauses 50 ms, doubling to 1 s while it keeps failing.
const BackoffPolicy kAcceptBackoff{50ms, 1000ms, 0.0};
constexpr std::chrono::seconds kAcceptWarningInterval{10};  // at most one accept warning per this
constexpr const char* kTextContentType = "text/plain; charset=utf-8";

std::string describe_address(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return (host.empty() ? std::string("*") : host) + ":" + std::to_string(port);
}

// A listening, non-blocking, close-on-exec socket for one resolved address; -1 with errno set.
int open_listener(const addrinfo& ai) {
  int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol);
  if (fd < 0) return -1;
  int one = 1;
  // Lets a restarted relay bind while its old connections are in TIME_WAIT (not a live listener).
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, ai.ai_addr, ai.ai_addrlen) != 0 || ::listen(fd, kListenBacklog) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
  return -1;
}

// max_connections clamped so that HTTP leaves HttpEndpoint::kReservedFds descriptors free.
int clamp_connections(int wanted, long long fd_limit) {
  if (fd_limit < 0) return wanted;
  return static_cast<int>(std::max<long long>(1, std::min<long long>(wanted, fd_limit - HttpEndpoint::kReservedFds)));
}

// RFC 9110 5.6.7 IMF-fixdate, e.g. "Sun, 06 Nov 1994 08:49:37 GMT".
std::string http_date() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char text[40];
  const size_t n = std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return std::string(text, n);
}

timeval to_timeval(std::chrono::microseconds d) {
  if (d.count() < 0) d = 0us;
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(d.count() % 1000000);
  return tv;
}

}  // namespace

struct HttpEndpoint::Response {
  int code;
  const char* reason;
  const char* content_type;
  std::string body;
  bool allow_header = false;  // 405: say which methods are allowed
};

// One client connection. In HttpEndpoint::connections_ while open, then in closed_.
struct HttpEndpoint::Connection {
  enum class State {
    Reading,    // the request head has not all arrived
    Writing,    // the answer is queued; the socket closes once it is sent
    Lingering,  // answer sent and our side shut down; dropping input until the client closes
    Closed,     // socket and timer freed; the object waits for reap_event_
  };

  Connection(HttpEndpoint& owner, Clock::time_point closes_at) : endpoint(owner), deadline(closes_at) {}
  ~Connection() { release(); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Closes the socket and cancels the timer. Both may be freed from inside their own
  // callbacks: libevent holds a reference on a bufferevent while its callback runs, and the
  // timer is not persistent.
  void release() noexcept {
    if (bev != nullptr) bufferevent_free(bev);
    if (timer != nullptr) event_free(timer);
    bev = nullptr;
    timer = nullptr;
    state = State::Closed;
  }

  HttpEndpoint& endpoint;
  std::list<Connection>::iterator self;  // its node in endpoint.connections_ (then closed_)
  bufferevent* bev = nullptr;            // owned; closes the socket when freed
  event* timer = nullptr;                // owned; fires at the deadline, or at the end of the linger
  Clock::time_point deadline;            // accept + request_deadline: closed then, whatever the state
  State state = State::Reading;
  bool peer_closed = false;              // the client shut down its side: close once the answer is out
  std::string received;                  // the request head so far (at most kMaxHeadersBytes + one read)
  size_t scanned = 0;                    // received[0, scanned) holds no end of head
};

HttpEndpoint::HttpEndpoint(EventLoop& loop, const std::string& bind_address, int port,
                           RenderMetrics render_metrics, CheckReady ready, HttpLimits limits)
    : base_(loop.raw()),
      accept_retry_(loop, [this] { update_listener(); }),
      request_deadline_(limits.request_deadline),
      render_metrics_(std::move(render_metrics)),
      ready_(std::move(ready)) {
  if (!render_metrics_ || !ready_) throw std::invalid_argument("HttpEndpoint: render_metrics and ready must be set");
  if (limits.max_connections < 1 || limits.request_deadline < 1ms) {
    throw std::invalid_argument("HttpEndpoint: max_connections and request_deadline must be at least 1");
  }
  if (port < 0 || port > 65535) {
    throw ConfigError("HTTP port must be in 0..65535, got " + std::to_string(port));
  }
  const std::string where = describe_address(bind_address, port);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  int rc = ::getaddrinfo(bind_address.empty() ? nullptr : bind_address.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    throw IoError("cannot listen on " + where + ": " +
                  (rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> addresses(found, &::freeaddrinfo);

  // The first address that accepts a listener wins (e.g. "::" where IPv6 works, else 0.0.0.0).
  int fd = -1;
  int error = 0;
  for (const addrinfo* ai = addresses.get(); ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = open_listener(*ai);
    if (fd < 0) error = errno;
  }
  if (fd < 0) throw IoError("cannot listen on " + where + ": " + std::strerror(error));
  port_ = bound_port(fd);

  reap_event_ = event_new(base_, -1, 0, &HttpEndpoint::on_reap, this);
  // Accepted sockets are non-blocking and close-on-exec; closes fd when freed. Enabled now.
  if (reap_event_ != nullptr) {
    listener_ = evconnlistener_new(base_, &HttpEndpoint::on_accept, this, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
                                   0 /* already listening */, fd);
  }
  if (listener_ == nullptr) {
    ::close(fd);
    if (reap_event_ != nullptr) event_free(reap_event_);
    throw IoError("cannot listen on " + where + ": libevent could not set up the listener");
  }
  evconnlistener_set_error_cb(listener_, &HttpEndpoint::on_accept_error);

  const long long fd_limit = fd_soft_limit();
  max_connections_ = clamp_connections(limits.max_connections, fd_limit);
  const std::string limit_text = fd_limit < 0 ? "unlimited" : std::to_string(fd_limit);
  if (max_connections_ < limits.max_connections) {
    spdlog::warn("HTTP on {}: connection cap lowered from {} to {}: the descriptor limit is {}, and {} are kept "
                 "for Redis and the process",
                 describe_address(bind_address, port_), limits.max_connections, max_connections_, limit_text,
                 kReservedFds);
  }
  spdlog::info("metrics on http://{}/metrics (and /healthz, /readyz): at most {} connections, each closed {} ms "
               "after accept (descriptor limit {})",
               describe_address(bind_address, port_), max_connections_, request_deadline_.count(), limit_text);
}

HttpEndpoint::~HttpEndpoint() {
  connections_.clear();  // ~Connection frees each bufferevent, closing its socket
  closed_.clear();
  evconnlistener_free(listener_);
  event_free(reap_event_);
}

// --- accepting ---------------------------------------------------------------------------

void HttpEndpoint::on_accept(evconnlistener*, int fd, sockaddr*, int, void* self) noexcept {
  try {
    static_cast<HttpEndpoint*>(self)->accept_connection(fd);
  } catch (const std::exception& e) {
    spdlog::warn("HTTP accept: {}; connection closed", e.what());
  } catch (...) {
    spdlog::warn("HTTP accept: unknown exception; connection closed");
  }
}

void HttpEndpoint::accept_connection(int fd) {
  if (accept_attempt_ > 0 && episode_warned_) spdlog::info("HTTP accepting connections again");
  accept_attempt_ = 0;  // a connection accepted ends a back-off episode
  episode_warned_ = false;
  if (open_connections() >= max_connections_) {
    // Not expected (the listener is disabled at the cap); refuse rather than exceed it.
    ::close(fd);
    update_listener();
    return;
  }
  std::unique_ptr<bufferevent, void (*)(bufferevent*)> bev(bufferevent_socket_new(base_, fd, BEV_OPT_CLOSE_ON_FREE),
                                                          &bufferevent_free);
  if (!bev) {
    ::close(fd);
    throw std::bad_alloc();
  }
  Connection& conn = connections_.emplace_back(*this, Clock::now() + request_deadline_);
  conn.self = std::prev(connections_.end());
  conn.bev = bev.release();
  conn.timer = event_new(base_, -1, 0, &HttpEndpoint::on_timeout, &conn);
  if (conn.timer == nullptr) {
    close_connection(conn);
    throw std::bad_alloc();
  }
  const timeval until_deadline = to_timeval(request_deadline_);
  event_add(conn.timer, &until_deadline);
  bufferevent_setcb(conn.bev, &HttpEndpoint::on_read, &HttpEndpoint::on_write, &HttpEndpoint::on_event, &conn);
  bufferevent_enable(conn.bev, EV_READ);  // EV_WRITE is on from the start
  update_listener();
}

void HttpEndpoint::on_accept_error(evconnlistener*, void* self) noexcept {
  const int error = EVUTIL_SOCKET_ERROR();  // accept()'s errno: libevent calls us right after it
  try {
    static_cast<HttpEndpoint*>(self)->back_off_accepting(error);
  } catch (...) {
    // Only logging can throw here (out of memory); the listener is already paused.
  }
}

void HttpEndpoint::back_off_accepting(int error) {
  const auto delay = backoff_delay(kAcceptBackoff, accept_attempt_, 0.0);
  const bool episode_starts = accept_attempt_ == 0;
  ++accept_attempt_;
  ++accept_failures_;
  accept_retry_.arm(delay);
  update_listener();  // disables it while the retry timer is armed
  const auto now = Clock::now();
  if (!episode_starts || (warned_ever_ && now - last_accept_warning_ < kAcceptWarningInterval)) {
    ++failures_unreported_;
    return;
  }
  const long long fd_limit = fd_soft_limit();
  spdlog::warn("HTTP accept failed: {} ({} connections open, descriptor limit {}); pausing accepts for {} ms, "
               "doubling up to {} ms while it fails{}",
               std::strerror(error), open_connections(), fd_limit < 0 ? "unlimited" : std::to_string(fd_limit),
               delay.count(), kAcceptBackoff.max.count(),
               failures_unreported_ == 0
                   ? std::string()
                   : "; " + std::to_string(failures_unreported_) + " failures not logged since the last warning");
  episode_warned_ = true;
  warned_ever_ = true;
  last_accept_warning_ = now;
  failures_unreported_ = 0;
}

void HttpEndpoint::update_listener() noexcept {
  const bool accept = open_connections() < max_connections_ && !accept_retry_.armed();
  if (accept == listening_) return;
  if (accept) {
    evconnlistener_enable(listener_);
  } else {
    evconnlistener_disable(listener_);
  }
  listening_ = accept;
}

// --- one connection ------------------------------------------------------------------------

void HttpEndpoint::on_read(bufferevent*, void* arg) noexcept {
  auto& conn = *static_cast<Connection*>(arg);
  try {
    conn.endpoint.read_request(conn);
  } catch (const std::exception& e) {
    spdlog::warn("HTTP connection: {}; closed", e.what());
    conn.endpoint.close_connection(conn);
  } catch (...) {
    spdlog::warn("HTTP connection: unknown exception; closed");
    conn.endpoint.close_connection(conn);
  }
}

void HttpEndpoint::read_request(Connection& conn) {
  evbuffer* input = bufferevent_get_input(conn.bev);
  const size_t available = evbuffer_get_length(input);
  if (conn.state != Connection::State::Reading) {
    evbuffer_drain(input, available);  // a body or anything after the head: never read
    return;
  }
  const size_t old_size = conn.received.size();
  conn.received.resize(old_size + available);
  evbuffer_remove(input, &conn.received[old_size], available);

  const size_t head_end = find_http_head_end(conn.received, conn.scanned);
  conn.scanned = conn.received.size();
  if (head_end == 0 && conn.received.size() <= kMaxHeadersBytes) return;  // wait for more
  if (head_end == 0 || head_end > kMaxHeadersBytes) {
    send_response(conn, {431, "Request Header Fields Too Large", kTextContentType, "request header fields too large\n"},
                  false);
    return;
  }
  const std::optional<HttpRequestHead> head = parse_http_request_head(std::string_view(conn.received).substr(0, head_end));
  if (!head) {
    send_response(conn, {400, "Bad Request", kTextContentType, "bad request\n"}, false);
    return;
  }
  if (head->content_length > kMaxBodyBytes) {
    send_response(conn, {413, "Payload Too Large", kTextContentType, "payload too large\n"}, false);
    return;
  }

  Response response{500, "Internal Server Error", kTextContentType, "internal error\n"};
  try {
    response = respond(head->method, head->path);
  } catch (const std::exception& e) {
    spdlog::warn("HTTP {} failed: {}", head->path, e.what());
  } catch (...) {
    spdlog::warn("HTTP {} failed: unknown exception", head->path);
  }
  send_response(conn, response, head->method == "HEAD");
}

void HttpEndpoint::send_response(Connection& conn, const Response& response, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(response.code) + " " + response.reason + "\r\n";
  out += "Date: " + http_date() + "\r\n";
  out += "Content-Type: " + std::string(response.content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";  // HEAD: the GET's length
  out += "Cache-Control: no-store\r\n";
  if (response.allow_header) out += "Allow: GET, HEAD\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head_only) out += response.body;

  conn.state = Connection::State::Writing;
  std::string().swap(conn.received);  // the head is no longer needed
  if (bufferevent_write(conn.bev, out.data(), out.size()) != 0) throw std::bad_alloc();
  // on_write runs once the answer has left the output buffer.
}

void HttpEndpoint::on_write(bufferevent*, void* arg) noexcept {
  auto& conn = *static_cast<Connection*>(arg);
  try {
    conn.endpoint.finish_write(conn);
  } catch (...) {
    conn.endpoint.close_connection(conn);  // finish_write only calls libevent and the clock
  }
}

void HttpEndpoint::finish_write(Connection& conn) {
  if (conn.state != Connection::State::Writing || evbuffer_get_length(bufferevent_get_output(conn.bev)) != 0) return;
  if (conn.peer_closed) {
    close_connection(conn);
    return;
  }
  // Our FIN tells the client the answer is complete; we drop what it still sends until it closes.
  ::shutdown(bufferevent_getfd(conn.bev), SHUT_WR);
  conn.state = Connection::State::Lingering;
  const auto until = std::min(conn.deadline, Clock::now() + kLingerTime);
  const timeval left = to_timeval(std::chrono::duration_cast<std::chrono::microseconds>(until - Clock::now()));
  event_add(conn.timer, &left);
}

void HttpEndpoint::on_event(bufferevent*, short what, void* arg) noexcept {
  auto& conn = *static_cast<Connection*>(arg);
  // The client shut down its side after sending its request: the answer still goes out.
  if ((what & BEV_EVENT_EOF) != 0 && (what & BEV_EVENT_ERROR) == 0 && conn.state == Connection::State::Writing) {
    conn.peer_closed = true;
    return;
  }
  conn.endpoint.close_connection(conn);  // EOF while reading or lingering, or a socket error
}

void HttpEndpoint::on_timeout(int, short, void* arg) noexcept {
  // The deadline (or the end of the linger): closed whatever the state.
  auto& conn = *static_cast<Connection*>(arg);
  conn.endpoint.close_connection(conn);
}

void HttpEndpoint::close_connection(Connection& conn) noexcept {
  if (conn.state == Connection::State::Closed) return;
  conn.release();
  closed_.splice(closed_.end(), connections_, conn.self);  // no allocation, no throw
  event_active(reap_event_, EV_TIMEOUT, 0);
  update_listener();
}

void HttpEndpoint::on_reap(int, short, void* self) noexcept {
  static_cast<HttpEndpoint*>(self)->closed_.clear();
}

// --- routes --------------------------------------------------------------------------------

HttpEndpoint::Response HttpEndpoint::respond(const std::string& method, const std::string& path) const {
  if (path != "/metrics" && path != "/healthz" && path != "/readyz") {
    return {404, "Not Found", kTextContentType, "not found\n"};
  }
  if (method != "GET" && method != "HEAD") {
    return {405, "Method Not Allowed", kTextContentType, "method not allowed\n", true};
  }
  if (path == "/metrics") return {200, "OK", kMetricsContentType, render_metrics_()};
  if (path == "/healthz") {
    std::string why;
    if (!healthy_ || healthy_(why)) return {200, "OK", kTextContentType, "ok\n"};
    return {503, "Service Unavailable", kTextContentType, (why.empty() ? "unhealthy" : why) + "\n"};
  }
  std::string why;
  if (ready_(why)) return {200, "OK", kTextContentType, "ready\n"};
  if (why.empty()) why = "not ready";
  return {503, "Service Unavailable", kTextContentType, why + "\n"};
}

}  // namespace expiry
