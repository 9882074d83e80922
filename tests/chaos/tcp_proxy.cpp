// TcpProxy implementation: one poll() loop over the listener, a self-pipe and every link's two
// sockets; bounded buffers give backpressure in both directions.
#include "chaos/tcp_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace expiry::test {
namespace {

constexpr int kSocketBufferBytes = 16 * 1024;  // SO_RCVBUF/SO_SNDBUF of the proxy's sockets
constexpr int kListenBacklog = 64;

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error("TcpProxy: " + what + ": " + std::strerror(errno));
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void set_small_buffers(int fd) {
  const int size = kSocketBufferBytes;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// A connected non-blocking socket to 127.0.0.1:port, or -1 (refused, or out of fds).
int connect_upstream(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  set_small_buffers(fd);
  const sockaddr_in addr = loopback(port);
  // Blocking connect: on loopback it completes or is refused at once (even when the server is
  // busy, the kernel completes the handshake from the listen backlog).
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  set_nonblocking(fd);
  return fd;
}

}  // namespace

// One client connection and its upstream connection.
struct TcpProxy::Link {
  int client_fd = -1;
  int upstream_fd = -1;
  std::string to_upstream;  // read from the client, not yet written upstream
  std::string to_client;    // read from upstream, not yet written to the client
  bool client_eof = false;
  bool upstream_eof = false;
  bool dead = false;

  ~Link() {
    if (client_fd >= 0) ::close(client_fd);
    if (upstream_fd >= 0) ::close(upstream_fd);
  }
};

TcpProxy::TcpProxy(int upstream_port) : upstream_port_(upstream_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw sys_error("socket");
  set_small_buffers(listen_fd_);  // inherited by accepted sockets
  sockaddr_in addr = loopback(0);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, kListenBacklog) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const auto error = sys_error("bind/listen");
    ::close(listen_fd_);
    throw error;
  }
  port_ = ntohs(addr.sin_port);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    const auto error = sys_error("pipe2");
    ::close(listen_fd_);
    throw error;
  }
  wake_read_fd_ = pipe_fds[0];
  wake_write_fd_ = pipe_fds[1];
  thread_ = std::thread([this] { run(); });
}

TcpProxy::~TcpProxy() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_thread();
  thread_.join();
  links_.clear();
  ::close(listen_fd_);
  ::close(wake_read_fd_);
  ::close(wake_write_fd_);
}

void TcpProxy::cut(CutMode mode) {
  std::unique_lock<std::mutex> lock(mutex_);
  requested_mode_ = mode == CutMode::Refuse ? Mode::Refuse : Mode::Hold;
  sync_with_thread(lock);
}

void TcpProxy::restore() {
  std::unique_lock<std::mutex> lock(mutex_);
  requested_mode_ = Mode::Open;
  sync_with_thread(lock);
}

void TcpProxy::stall() {
  std::unique_lock<std::mutex> lock(mutex_);
  requested_mode_ = Mode::Stall;
  sync_with_thread(lock);
}

bool TcpProxy::is_cut() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requested_mode_ != Mode::Open;
}

size_t TcpProxy::connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return open_links_;
}

void TcpProxy::sync_with_thread(std::unique_lock<std::mutex>& lock) {
  const uint64_t generation = ++requested_;
  lock.unlock();
  wake_thread();
  lock.lock();
  applied_cv_.wait(lock, [&] { return applied_ >= generation; });
}

void TcpProxy::wake_thread() {
  const char byte = 1;
  // A full pipe already guarantees a wake-up, so a failed write is harmless.
  (void)!::write(wake_write_fd_, &byte, 1);
}

void TcpProxy::apply_mode(Mode mode) {
  mode_ = mode;
  if (mode == Mode::Refuse || mode == Mode::Hold) close_all_links();
}

void TcpProxy::close_all_links() { links_.clear(); }

void TcpProxy::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or a transient error (EMFILE ...): try again on the next wake-up
    if (mode_ == Mode::Refuse) {
      ::close(fd);
      continue;
    }
    const int up = connect_upstream(upstream_port_);
    if (up < 0) {
      ::close(fd);
      continue;
    }
    auto link = std::make_unique<Link>();
    link->client_fd = fd;
    link->upstream_fd = up;
    links_.push_back(std::move(link));
  }
}

namespace {

// Reads what fits into `buffer`; sets `eof` on an orderly close. False on a socket error.
bool read_into(int fd, std::string& buffer, bool& eof) {
  char chunk[TcpProxy::kBufferBytes];
  const size_t room = TcpProxy::kBufferBytes - std::min(buffer.size(), TcpProxy::kBufferBytes);
  if (room == 0) return true;
  const ssize_t n = ::recv(fd, chunk, room, 0);
  if (n > 0) {
    buffer.append(chunk, static_cast<size_t>(n));
    return true;
  }
  if (n == 0) {
    eof = true;
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

// Writes as much of `buffer` as the socket takes. False on a socket error.
bool write_from(int fd, std::string& buffer) {
  if (buffer.empty()) return true;
  const ssize_t n = ::send(fd, buffer.data(), buffer.size(), MSG_NOSIGNAL);
  if (n >= 0) {
    buffer.erase(0, static_cast<size_t>(n));
    return true;
  }
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

}  // namespace

void TcpProxy::run() {
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({wake_read_fd_, POLLIN, 0});
    const bool holding = mode_ == Mode::Hold || mode_ == Mode::Stall;
    fds.push_back({listen_fd_, static_cast<short>(holding ? 0 : POLLIN), 0});
    const size_t polled_links = links_.size();
    for (const auto& link : links_) {
      short client_events = 0;
      short upstream_events = 0;
      if (!link->client_eof && link->to_upstream.size() < kBufferBytes) client_events |= POLLIN;
      if (!link->to_client.empty()) client_events |= POLLOUT;
      if (!link->upstream_eof && link->to_client.size() < kBufferBytes) upstream_events |= POLLIN;
      if (!link->to_upstream.empty()) upstream_events |= POLLOUT;
      if (mode_ == Mode::Stall) client_events = upstream_events = 0;  // only a close is still seen
      fds.push_back({link->client_fd, client_events, 0});
      fds.push_back({link->upstream_fd, upstream_events, 0});
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;  // cannot happen with valid fds; the destructor still joins
    }

    if (fds[0].revents & POLLIN) {
      char drain[64];
      while (::read(wake_read_fd_, drain, sizeof drain) > 0) {
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      if (applied_ != requested_) {
        apply_mode(requested_mode_);
        applied_ = requested_;
        open_links_ = links_.size();
        applied_cv_.notify_all();
        continue;  // links_ changed: the pollfd indices are stale
      }
    }
    if (fds[1].revents & POLLIN) accept_all();

    for (size_t i = 0; i < polled_links; ++i) {
      Link& link = *links_[i];
      const short client_revents = fds[2 + 2 * i].revents;
      const short upstream_revents = fds[3 + 2 * i].revents;
      bool ok = true;
      if (client_revents & POLLIN) ok = ok && read_into(link.client_fd, link.to_upstream, link.client_eof);
      if (upstream_revents & POLLIN) ok = ok && read_into(link.upstream_fd, link.to_client, link.upstream_eof);
      if (ok && (client_revents & POLLOUT)) ok = write_from(link.client_fd, link.to_client);
      if (ok && (upstream_revents & POLLOUT)) ok = write_from(link.upstream_fd, link.to_upstream);
      // POLLERR, or POLLHUP while we could not read: the peer is gone for both directions.
      if ((client_revents | upstream_revents) & POLLERR) ok = false;
      if ((client_revents & POLLHUP) && !(client_revents & POLLIN)) ok = false;
      if ((upstream_revents & POLLHUP) && !(upstream_revents & POLLIN)) ok = false;
      // One side closed: deliver what is buffered for the other side, then close both.
      const bool drained = (link.client_eof && link.to_upstream.empty()) ||
                           (link.upstream_eof && link.to_client.empty());
      link.dead = !ok || drained;
    }
    for (size_t i = 0; i < links_.size();) {
      if (links_[i]->dead) {
        links_[i] = std::move(links_.back());
        links_.pop_back();
      } else {
        ++i;
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    open_links_ = links_.size();
  }
}

}  // namespace expiry::test
