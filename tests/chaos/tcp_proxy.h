// TcpProxy: a loopback TCP forwarder on its own poll() thread that can cut the network between
// its clients and one upstream port (a partition) and restore it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace expiry::test {

// Forwards every connection accepted on 127.0.0.1:port() to 127.0.0.1:<upstream_port>.
//
// Contracts:
// - Loopback only. Each accepted client gets its own upstream connection, opened at accept
//   time; if the upstream refuses, the client is closed at once.
// - Backpressure: at most `kBufferBytes` are buffered per direction and connection, and the
//   proxy's sockets use small kernel buffers, so a client that stops reading makes the upstream
//   (Redis) buffer its output, as it would without the proxy.
// - When one side closes, what is already buffered for the other side is still delivered, then
//   both are closed.
// - cut() closes every connection and, until restore(), either refuses new ones (accepts and
//   closes them: connect succeeds, the first read sees EOF) or holds them (leaves them in the
//   listen backlog: connect succeeds, but nothing is answered until restore() accepts and
//   forwards them; once the backlog is full, connects hang). cut() and restore() return once
//   the poll thread has applied them.
// - stall() keeps every connection open but forwards nothing either way, as a network path
//   that silently loses everything would (no side sees a close); new connections are held as
//   by cut(Hold). restore() forwards again.
// - The destructor stops the thread and closes every socket. Methods are thread-safe.
class TcpProxy {
 public:
  enum class CutMode { Refuse, Hold };
  static constexpr size_t kBufferBytes = 16 * 1024;

  // Listens on a kernel-chosen free loopback port; throws std::runtime_error on failure.
  explicit TcpProxy(int upstream_port);
  ~TcpProxy();

  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;
  TcpProxy(TcpProxy&&) = delete;
  TcpProxy& operator=(TcpProxy&&) = delete;

  int port() const { return port_; }
  void cut(CutMode mode);
  void stall();
  void restore();
  bool is_cut() const;
  // Open client connections (each with its upstream).
  size_t connections() const;

 private:
  struct Link;
  enum class Mode { Open, Refuse, Hold, Stall };

  void run();
  void apply_mode(Mode mode);
  // Waits until the poll thread has seen every request made so far.
  void sync_with_thread(std::unique_lock<std::mutex>& lock);
  void wake_thread();
  void accept_all();
  void close_all_links();

  int upstream_port_;
  int port_ = 0;
  int listen_fd_ = -1;
  int wake_read_fd_ = -1;              // self-pipe: cut/restore/stop wake poll()
  int wake_write_fd_ = -1;
  mutable std::mutex mutex_;
  std::condition_variable applied_cv_;
  Mode requested_mode_ = Mode::Open;   // guarded by mutex_
  uint64_t requested_ = 0;             // request generation, guarded by mutex_
  uint64_t applied_ = 0;               // generation the thread has applied, guarded by mutex_
  bool stop_ = false;                  // guarded by mutex_
  size_t open_links_ = 0;              // guarded by mutex_ (copy for readers)
  Mode mode_ = Mode::Open;             // thread-owned
  std::vector<std::unique_ptr<Link>> links_;  // thread-owned
  std::thread thread_;                 // last: started once everything above is initialised
};

}  // namespace expiry::test
