// See tls_probe.h. Blocking sockets with SO_RCVTIMEO/SO_SNDTIMEO (which bound connect() on Linux).
#include "io/tls_probe.h"

#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>

namespace expiry {
namespace {

class Socket {
 public:
  // A socket connected to host:port within `budget`, with reads and writes bounded by it too;
  // valid() is false when no address answered.
  Socket(const std::string& host, int port, std::chrono::milliseconds budget) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(budget.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((budget.count() % 1000) * 1000);
    for (addrinfo* a = found; a != nullptr && fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        ::close(fd);
      }
    }
    freeaddrinfo(found);
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

struct SslDeleter {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
using SslPtr = std::unique_ptr<SSL, SslDeleter>;

// A client context that checks nothing: the probe asks only whether the peer speaks TLS.
SSL_CTX* any_peer_context() {
  static SSL_CTX* const ctx = [] {
    SSL_CTX* made = SSL_CTX_new(TLS_client_method());
    if (made != nullptr) SSL_CTX_set_verify(made, SSL_VERIFY_NONE, nullptr);
    return made;
  }();
  return ctx;
}

}  // namespace

std::optional<std::string> probe_port_speaks_tls(const std::string& host, int port, std::chrono::milliseconds budget) {
  try {
    SSL_CTX* ctx = any_peer_context();
    if (ctx == nullptr) return std::nullopt;
    Socket socket(host, port, budget);
    if (!socket.valid()) return std::nullopt;
    ERR_clear_error();
    SslPtr ssl(SSL_new(ctx));
    if (!ssl || SSL_set_fd(ssl.get(), socket.fd()) != 1) return std::nullopt;
    const bool handshake = SSL_connect(ssl.get()) == 1;
    const unsigned long e = ERR_peek_last_error();
    const char* reason = e != 0 ? ERR_reason_error_string(e) : nullptr;
    // An alert is a TLS record too: the server spoke TLS and refused something in it.
    const bool alert = reason != nullptr && std::string(reason).find("alert") != std::string::npos;
    ERR_clear_error();
    if (!handshake && !alert) return std::nullopt;
    return "the server at " + host + ":" + std::to_string(port) +
           " answers in TLS: use a rediss:// URL (with tls_ca_cert_file for its CA)";
  } catch (...) {  // std::bad_alloc: learn nothing
    return std::nullopt;
  }
}

std::optional<std::string> probe_port_speaks_plain_redis(const std::string& host, int port,
                                                         std::chrono::milliseconds budget) {
  try {
    Socket socket(host, port, budget);
    if (!socket.valid()) return std::nullopt;
    static constexpr char kPing[] = "PING\r\n";
    if (::send(socket.fd(), kPing, sizeof kPing - 1, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof kPing - 1)) {
      return std::nullopt;
    }
    char first = 0;
    if (::recv(socket.fd(), &first, 1, 0) != 1 || (first != '+' && first != '-')) return std::nullopt;
    return "the server at " + host + ":" + std::to_string(port) +
           " answers in plain text, not TLS: use a redis:// URL, or the server's TLS port";
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<std::string> probe_tls_refusal(const TlsContext& tls, const std::string& host, int port,
                                             std::chrono::milliseconds budget) {
  try {
    Socket socket(host, port, budget);
    if (!socket.valid()) return std::nullopt;
    std::string error;
    SslPtr ssl(tls.new_session(host, &error));
    if (!ssl || SSL_set_fd(ssl.get(), socket.fd()) != 1) return std::nullopt;
    bool definite = false;
    std::string text;
    if (SSL_connect(ssl.get()) != 1) {
      text = tls.explain_failure(ssl.get(), host, "", false, &definite);
    } else {
      char byte = 0;
      if (SSL_read(ssl.get(), &byte, 1) > 0) {
        ERR_clear_error();
        return std::nullopt;  // the server spoke first: nothing refused
      }
      // A server that accepts this client waits for a command: the read times out (no reason,
      // nothing definite). One that refuses it sends an alert, which explain_failure names.
      text = tls.explain_failure(ssl.get(), host, "", false, &definite);
    }
    ERR_clear_error();
    if (!definite) return std::nullopt;
    return text;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace expiry
