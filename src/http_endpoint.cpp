// evhttp server behind HttpEndpoint; see http_endpoint.h for the routes and contracts.
// We open the listening socket ourselves (instead of evhttp_bind_socket) so that a failure
// reports the real errno and getaddrinfo error, then hand it to evhttp through a listener.
#include "http_endpoint.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>

#include "errors.h"

namespace expiry {

namespace {

constexpr std::chrono::seconds kConnectionTimeout{10};  // per read or write on a client connection
constexpr ev_ssize_t kMaxHeadersBytes = 8 * 1024;       // request line + headers
constexpr ev_ssize_t kMaxBodyBytes = 1024;              // no route takes a body
constexpr int kListenBacklog = 64;                      // pending connections
constexpr const char* kTextContentType = "text/plain; charset=utf-8";

// Every method evhttp knows, so that our handler (not libevent's 501) answers the ones we refuse.
constexpr ev_uint16_t kAllMethods = EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT |
                                    EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
                                    EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH;

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

}  // namespace

struct HttpEndpoint::Response {
  int code;
  const char* reason;
  const char* content_type;
  std::string body;
  bool allow_header = false;  // 405: say which methods are allowed
};

HttpEndpoint::HttpEndpoint(EventLoop& loop, const std::string& bind_address, int port,
                           RenderMetrics render_metrics, CheckReady ready)
    : render_metrics_(std::move(render_metrics)), ready_(std::move(ready)) {
  if (!render_metrics_ || !ready_) throw std::invalid_argument("HttpEndpoint: render_metrics and ready must be set");
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

  std::unique_ptr<evhttp, void (*)(evhttp*)> http(evhttp_new(loop.raw()), &evhttp_free);
  evconnlistener* listener = nullptr;
  if (http) {
    // Not enabled until evhttp_bind_listener sets its callback; closes fd when freed.
    listener = evconnlistener_new(loop.raw(), nullptr, nullptr, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
                                  0 /* already listening */, fd);
  }
  if (listener == nullptr) {
    ::close(fd);
    throw IoError("cannot listen on " + where + ": libevent could not set up the listener");
  }
  if (evhttp_bind_listener(http.get(), listener) == nullptr) {
    evconnlistener_free(listener);
    throw IoError("cannot listen on " + where + ": libevent could not set up the listener");
  }

  timeval timeout{};
  timeout.tv_sec = static_cast<time_t>(kConnectionTimeout.count());
  evhttp_set_timeout_tv(http.get(), &timeout);
  evhttp_set_max_headers_size(http.get(), kMaxHeadersBytes);
  evhttp_set_max_body_size(http.get(), kMaxBodyBytes);
  evhttp_set_allowed_methods(http.get(), kAllMethods);
  evhttp_set_gencb(http.get(), &HttpEndpoint::handle_request, this);
  http_ = http.release();
}

HttpEndpoint::~HttpEndpoint() { evhttp_free(http_); }

HttpEndpoint::Response HttpEndpoint::respond(int method, const std::string& path) const {
  if (path != "/metrics" && path != "/healthz" && path != "/readyz") {
    return {404, "Not Found", kTextContentType, "not found\n"};
  }
  if (method != EVHTTP_REQ_GET && method != EVHTTP_REQ_HEAD) {
    return {405, "Method Not Allowed", kTextContentType, "method not allowed\n", true};
  }
  if (path == "/metrics") return {200, "OK", kMetricsContentType, render_metrics_()};
  if (path == "/healthz") return {200, "OK", kTextContentType, "ok\n"};
  std::string why;
  if (ready_(why)) return {200, "OK", kTextContentType, "ready\n"};
  if (why.empty()) why = "not ready";
  return {503, "Service Unavailable", kTextContentType, why + "\n"};
}

void HttpEndpoint::handle_request(evhttp_request* req, void* self) noexcept {
  // evhttp_send_reply is the last call on every path, so a request is answered exactly once.
  try {
    const auto* endpoint = static_cast<const HttpEndpoint*>(self);
    const int method = evhttp_request_get_command(req);
    const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
    const char* raw_path = uri != nullptr ? evhttp_uri_get_path(uri) : nullptr;
    const std::string path = raw_path != nullptr ? raw_path : "";

    Response response{500, "Internal Server Error", kTextContentType, "internal error\n"};
    try {
      response = endpoint->respond(method, path);
    } catch (const std::exception& e) {
      spdlog::warn("HTTP {} failed: {}", path, e.what());
    } catch (...) {
      spdlog::warn("HTTP {} failed: unknown exception", path);
    }

    evkeyvalq* headers = evhttp_request_get_output_headers(req);
    evhttp_add_header(headers, "Content-Type", response.content_type);
    evhttp_add_header(headers, "Cache-Control", "no-store");
    if (response.allow_header) evhttp_add_header(headers, "Allow", "GET, HEAD");
    std::unique_ptr<evbuffer, void (*)(evbuffer*)> body(evbuffer_new(), &evbuffer_free);
    if (!body) throw std::bad_alloc();
    if (method == EVHTTP_REQ_HEAD) {
      // The length the GET would have; evhttp then sends the headers only.
      evhttp_add_header(headers, "Content-Length", std::to_string(response.body.size()).c_str());
    } else if (evbuffer_add(body.get(), response.body.data(), response.body.size()) != 0) {
      throw std::bad_alloc();
    }
    evhttp_send_reply(req, response.code, response.reason, body.get());
  } catch (...) {
    // Out of memory before anything was sent: answer without a body.
    evhttp_send_reply(req, 500, "Internal Server Error", nullptr);
  }
}

}  // namespace expiry
