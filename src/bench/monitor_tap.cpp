// See monitor_tap.h.
#include "bench/monitor_tap.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <vector>

#include "base/errors.h"

namespace expiry::bench {

namespace {

class Socket {
 public:
  explicit Socket(const RedisEndpoint& redis) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(redis.host.c_str(), std::to_string(redis.port).c_str(), &hints, &found) != 0 || !found) {
      throw IoError("MONITOR: cannot resolve " + redis.host);
    }
    fd_ = socket(found->ai_family, found->ai_socktype, found->ai_protocol);
    const int rc = fd_ < 0 ? -1 : connect(fd_, found->ai_addr, found->ai_addrlen);
    freeaddrinfo(found);
    if (rc != 0) throw IoError("MONITOR: cannot connect to " + redis.redacted());
  }
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  void send_command(const std::vector<std::string>& argv) {
    std::string out = "*" + std::to_string(argv.size()) + "\r\n";
    for (const auto& a : argv) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    for (size_t off = 0; off < out.size();) {
      const ssize_t n = write(fd_, out.data() + off, out.size() - off);
      if (n <= 0) throw IoError("MONITOR: write failed");
      off += static_cast<size_t>(n);
    }
  }
  // The next "\r\n"-terminated line, or false if none arrived before `deadline`.
  bool read_line(std::string& line, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const auto eol = buffer_.find("\r\n");
      if (eol != std::string::npos) {
        line = buffer_.substr(0, eol);
        buffer_.erase(0, eol + 2);
        return true;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[65536];
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) throw IoError("MONITOR: connection closed");
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

long long MonitorCounts::total_sent() const {
  long long n = 0;
  for (const auto& [name, count] : sent) n += count;
  return n;
}

MonitorCounts monitor_commands(const RedisEndpoint& redis, std::chrono::milliseconds window) {
  Socket sock(redis);
  const auto setup_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string line;
  auto expect_ok = [&](const char* what) {
    if (!sock.read_line(line, setup_deadline) || line.empty() || line[0] == '-') {
      throw IoError(std::string("MONITOR: ") + what + " refused: " + line);
    }
  };
  if (!redis.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!redis.user.empty()) auth.push_back(redis.user);
    auth.push_back(redis.password);
    sock.send_command(auth);
    expect_ok("AUTH");
  }
  sock.send_command({"MONITOR"});
  expect_ok("MONITOR");
  MonitorCounts counts;
  const auto deadline = std::chrono::steady_clock::now() + window;
  // +1700000000.123456 [0 127.0.0.1:5555] "fcall" "expiry_sweep" ...
  while (sock.read_line(line, deadline)) {
    const auto open = line.find(" [");
    const auto close = line.find("] \"", open == std::string::npos ? 0 : open);
    if (open == std::string::npos || close == std::string::npos) continue;
    const bool inside = line.compare(close - 3, 3, "lua") == 0;
    const auto name_end = line.find('"', close + 3);
    std::string name = line.substr(close + 3, name_end == std::string::npos ? std::string::npos : name_end - close - 3);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ++(inside ? counts.inside : counts.sent)[name];
  }
  return counts;
}

}  // namespace expiry::bench
