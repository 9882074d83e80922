// HTTP abuse at a low descriptor limit: the relay and the order-canceller run with
// RLIMIT_NOFILE 128 (under util-linux prlimit) while hundreds of slowloris clients hold
// their HTTP endpoint at its connection cap and beyond (through a round of request
// deadlines). Their Redis connections are killed meanwhile, and must be reopened: every task
// still fires on time, exactly once, and the process neither spins nor floods its log.
// Prints the lateness it measured ("[ measured ]").
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "functions/stream_entry.h"
#include "integration/relay/relay_harness.h"
#include "orders/order_canceller.h"

namespace expiry::test {
namespace {

constexpr const char* kPrlimit = "/usr/bin/prlimit";  // util-linux, an essential package on Debian
constexpr int kFdLimit = 128;                         // the services' RLIMIT_NOFILE (soft and hard)
constexpr int kHttpCap = 64;                          // HttpLimits' default; min(64, 128 - 32)
constexpr int kSlowClients = 300;                     // far beyond the cap and the listen backlog (64)
constexpr auto kTrickle = 500ms;                      // one header byte per client per this

// Keeps `count` slowloris clients on 127.0.0.1:port from a thread of its own: each sends a
// request line, then one header byte every kTrickle, never completing its request, and is
// reopened as soon as the server closes it. Connections the server has not accepted wait in
// its accept queue or in SYN_SENT (non-blocking connect), so the endpoint stays at its cap.
class SlowClients {
 public:
  SlowClients(int port, int count) : port_(port), slots_(static_cast<size_t>(count)) {
    thread_ = std::thread([this] { run(); });
  }
  ~SlowClients() { stop(); }
  SlowClients(const SlowClients&) = delete;
  SlowClients& operator=(const SlowClients&) = delete;

  // Joins the thread and closes every client.
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (auto& slot : slots_) close_slot(slot);
  }

  long connected() const { return connected_; }            // connections established now
  long closed_by_server() const { return closed_by_server_; }  // ever
  long answered_bytes() const { return answered_bytes_; }  // response bytes received (expect none)

 private:
  struct Slot {
    int fd = -1;
    bool connected = false;
    std::chrono::steady_clock::time_point next_byte{};
  };

  void open_slot(Slot& slot) {
    slot.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (slot.fd < 0) return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    slot.connected = false;
    if (::connect(slot.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      on_connected(slot);
    } else if (errno != EINPROGRESS) {
      close_slot(slot);
    }
  }

  void on_connected(Slot& slot) {
    slot.connected = true;
    ++connected_;
    static const std::string kStart = "GET /metrics HTTP/1.1\r\nHost: relay\r\nX-Slow: ";
    ::send(slot.fd, kStart.data(), kStart.size(), MSG_NOSIGNAL);
    slot.next_byte = std::chrono::steady_clock::now() + kTrickle;
  }

  void close_slot(Slot& slot) {
    if (slot.fd < 0) return;
    ::close(slot.fd);
    if (slot.connected) --connected_;
    slot.fd = -1;
    slot.connected = false;
  }

  void run() {
    std::vector<pollfd> fds(slots_.size());
    while (!stop_) {
      for (size_t i = 0; i < slots_.size(); ++i) {
        if (slots_[i].fd < 0) open_slot(slots_[i]);
        fds[i] = {slots_[i].fd, static_cast<short>(slots_[i].connected ? POLLIN : POLLOUT), 0};
      }
      ::poll(fds.data(), fds.size(), 20 /* ms */);
      const auto now = std::chrono::steady_clock::now();
      for (size_t i = 0; i < slots_.size(); ++i) {
        Slot& slot = slots_[i];
        if (slot.fd < 0) continue;
        if (!slot.connected) {
          if ((fds[i].revents & (POLLOUT | POLLERR | POLLHUP)) == 0) continue;
          int error = 0;
          socklen_t len = sizeof error;
          ::getsockopt(slot.fd, SOL_SOCKET, SO_ERROR, &error, &len);
          if (error == 0) {
            on_connected(slot);
          } else {
            close_slot(slot);
          }
          continue;
        }
        if ((fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
          char buf[4096];
          const ssize_t n = ::recv(slot.fd, buf, sizeof buf, MSG_DONTWAIT);
          if (n > 0) {
            answered_bytes_ += n;
          } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            ++closed_by_server_;
            close_slot(slot);
            continue;
          }
        }
        if (now >= slot.next_byte) {
          ::send(slot.fd, "a", 1, MSG_NOSIGNAL);  // an error shows up as a close on the next poll
          slot.next_byte = now + kTrickle;
        }
      }
    }
  }

  const int port_;
  std::vector<Slot> slots_;  // touched by the thread only, until stop() has joined it
  std::atomic<bool> stop_{false};
  std::atomic<long> connected_{0};
  std::atomic<long> closed_by_server_{0};
  std::atomic<long> answered_bytes_{0};
  std::thread thread_;  // declared last: starts after every member it uses
};

int open_fds(pid_t pid) {
  DIR* dir = ::opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count;
}

// User + system CPU time of a process, from /proc/<pid>/stat (fields 14 and 15).
std::chrono::milliseconds cpu_time(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t comm_end = stat.rfind(')');
  if (comm_end == std::string::npos) return std::chrono::milliseconds(-1);
  std::istringstream fields(stat.substr(comm_end + 2));  // from field 3 (state) on
  std::string field;
  long long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stoll(field);
  }
  return std::chrono::milliseconds(ticks * 1000 / ::sysconf(_SC_CLK_TCK));
}

std::string process_name(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

long long file_size(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return in ? static_cast<long long>(in.tellg()) : -1;
}

long long percentile(const std::vector<long long>& sorted, double p) {
  if (sorted.empty()) return -1;
  const size_t rank = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(rank, sorted.size() - 1)];
}

class HttpFdLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::access(kPrlimit, X_OK), 0) << kPrlimit << " (util-linux) is needed to start the services with a low "
                                           << "descriptor limit";
  }

  // `program args...` with RLIMIT_NOFILE kFdLimit:kFdLimit (prlimit execs it: same pid).
  std::unique_ptr<ChildProcess> start_limited(const std::string& program, const std::vector<std::string>& args,
                                              const std::string& log_name) {
    std::vector<std::string> argv = {"--nofile=" + std::to_string(kFdLimit) + ":" + std::to_string(kFdLimit), "--",
                                     program};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<ChildProcess>(kPrlimit, argv, std::vector<std::pair<std::string, std::string>>{},
                                          server_.dir() + "/" + log_name);
  }

  // The descriptors `pid` holds once the probes' connections have closed: two samples 50 ms
  // apart agree (-1 if they never do within 5 s).
  static int settled_fds(pid_t pid) {
    int fds = -1;
    const bool steady = wait_until(
        [&] {
          const int now = open_fds(pid);
          const bool same = now > 0 && now == fds;
          fds = now;
          return same;
        },
        5s, 50ms);
    return steady ? fds : -1;
  }

  // Waits until `pid` holds at least `fds` descriptors, recording the most it was seen with.
  bool wait_fds_at_least(pid_t pid, int fds, int& most) {
    return wait_until(
        [&] {
          const int now = open_fds(pid);
          most = std::max(most, now);
          return now >= fds;
        },
        15s);
  }

  RedisServer server_;
  TestConnection redis_{server_.host(), server_.port()};
};

TEST_F(HttpFdLimitTest, RelayForwardsOnTimeWhileHttpIsHeldAtItsCapAndRedisConnectionsAreKilled) {
  const int port = free_port();
  auto relay = start_limited(EXPIRY_RELAY_BIN,
                             {"--redis-url", server_.url(), "--instance", "r1", "--reconnect-initial-ms", "20",
                              "--reconnect-max-ms", "200", "--metrics-port", std::to_string(port)},
                             "relay-r1.log");
  wait_relay_ready(redis_, "r1", *relay);
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/healthz").status == 200; }, 5s)) << relay->output();
  const pid_t pid = relay->pid();
  ASSERT_EQ(process_name(pid), "expiry-relay");
  EXPECT_NE(relay->output().find("descriptor limit (RLIMIT_NOFILE): 128"), std::string::npos) << relay->output();
  EXPECT_NE(relay->output().find("at most 64 connections"), std::string::npos) << relay->output();
  const int base_fds = settled_fds(pid);
  ASSERT_GT(base_fds, 0);

  const auto cpu_before = cpu_time(pid);
  const long long log_before = file_size(relay->log_path());
  const auto hold_start = std::chrono::steady_clock::now();
  SlowClients clients(port, kSlowClients);
  int most_fds = base_fds;
  ASSERT_TRUE(wait_fds_at_least(pid, base_fds + kHttpCap, most_fds))
      << "the HTTP side never reached its cap: " << open_fds(pid) << " descriptors, " << clients.connected()
      << " clients connected";
  // The first wave is closed at the request deadline (5 s) and queued clients take its place.
  ASSERT_TRUE(wait_until(
      [&] {
        most_fds = std::max(most_fds, open_fds(pid));
        return clients.closed_by_server() >= kHttpCap;
      },
      15s))
      << clients.closed_by_server() << " clients closed by the relay";
  ASSERT_TRUE(wait_fds_at_least(pid, base_fds + kHttpCap, most_fds)) << open_fds(pid) << " descriptors";

  // Both Redis connections go; with no descriptor to spare they could not be reopened.
  EXPECT_GE(integer(redis_, {"CLIENT", "KILL", "TYPE", "pubsub"}), 1);
  EXPECT_GE(integer(redis_, {"CLIENT", "KILL", "TYPE", "normal"}), 1);  // SKIPME yes: not ours
  std::vector<Task> tasks;
  for (int i = 0; i < 200; ++i) tasks.push_back({"fd-" + std::to_string(i), 500 + i * 10, "p" + std::to_string(i)});
  const auto due = schedule_all(redis_, tasks);
  ASSERT_EQ(due.size(), tasks.size());
  ASSERT_TRUE(wait_until(
      [&] {
        most_fds = std::max(most_fds, open_fds(pid));
        return xlen(redis_) >= static_cast<long long>(tasks.size());
      },
      20s))
      << xlen(redis_) << " of " << tasks.size() << " forwarded\n"
      << relay->output();
  const int fds_at_end_of_hold = open_fds(pid);
  const auto hold_wall =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - hold_start);
  const auto cpu = cpu_time(pid) - cpu_before;
  const long long log_growth = file_size(relay->log_path()) - log_before;

  const auto entries = xrange_all(redis_, "expiry:stream");
  std::map<std::string, std::string> expected;
  for (const auto& t : tasks) expected[t.id] = t.payload;
  expect_exactly_once(entries, expected);
  std::vector<long long> lateness;
  for (const auto& e : entries) lateness.push_back(std::stoll(e.at(entry_field::kFiredMs)) - std::stoll(e.at(entry_field::kDueMs)));
  std::sort(lateness.begin(), lateness.end());
  const long long p50 = percentile(lateness, 0.50);
  const long long p99 = percentile(lateness, 0.99);
  const long long max = lateness.empty() ? -1 : lateness.back();
  std::cout << "[ measured ] relay, RLIMIT_NOFILE " << kFdLimit << ", " << kSlowClients
            << " slowloris clients, HTTP at its cap of " << kHttpCap << ", both Redis connections killed: "
            << tasks.size() << " tasks, lateness p50 " << p50 << " ms, p99 " << p99 << " ms, max " << max
            << " ms; descriptors " << base_fds << " before, at most " << most_fds << " during; CPU " << cpu.count()
            << " ms in " << hold_wall.count() << " ms; log +" << log_growth << " bytes; clients closed at the "
            << "request deadline " << clients.closed_by_server() << "\n";
  RecordProperty("lateness_p50_ms", static_cast<int>(p50));
  RecordProperty("lateness_p99_ms", static_cast<int>(p99));
  RecordProperty("lateness_max_ms", static_cast<int>(max));

  EXPECT_LT(p99, 500) << "tasks fired late";
  EXPECT_LE(most_fds, base_fds + kHttpCap + 4) << "HTTP took more descriptors than its cap";  // +4: a reconnect in flight
  EXPECT_GE(fds_at_end_of_hold, base_fds + kHttpCap - 8) << "the HTTP side was not held at its cap";
  EXPECT_LT(cpu.count(), hold_wall.count() / 4) << "the relay used " << cpu.count() << " ms of CPU in "
                                                << hold_wall.count() << " ms (a busy loop uses all of it)";
  EXPECT_LT(log_growth, 64 * 1024) << "log flood";
  EXPECT_EQ(clients.answered_bytes(), 0) << "an incomplete request got an answer";

  clients.stop();
  // Healthy is not ready: the subscriber killed during the hold must be back too.
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/healthz").status == 200 && relay_ready(redis_, "r1"); }, 30s))
      << http_get(port, "/healthz").status << " " << relay_ready(redis_, "r1") << "\n" << relay->output();
  EXPECT_TRUE(relay_ready(redis_, "r1"));
  EXPECT_EQ(relay->terminate(), 0);
}

TEST_F(HttpFdLimitTest, CancellerKeepsCancellingWhileHttpIsHeldAtItsCap) {
  redis_.command({"XGROUP", "CREATE", "expiry:stream", "workers", "0", "MKSTREAM"});
  redis_.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
  const int port = free_port();
  auto canceller = start_limited(ORDER_CANCELLER_BIN,
                                 {"--redis-url", server_.url(), "--consumer", "c1", "--block-ms", "200",
                                  "--stream", "expiry:stream", "--metrics-port", std::to_string(port)},
                                 "canceller-c1.log");
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/readyz").status == 200; }, 10s)) << canceller->output();
  const pid_t pid = canceller->pid();
  ASSERT_EQ(process_name(pid), "order-canceller");
  EXPECT_NE(canceller->output().find("at most 64 connections"), std::string::npos) << canceller->output();
  const int base_fds = settled_fds(pid);
  ASSERT_GT(base_fds, 0);
  const long long log_before = file_size(canceller->log_path());

  SlowClients clients(port, 200);
  int most_fds = base_fds;
  ASSERT_TRUE(wait_fds_at_least(pid, base_fds + kHttpCap, most_fds)) << open_fds(pid) << " descriptors";
  EXPECT_GE(integer(redis_, {"CLIENT", "KILL", "TYPE", "normal"}), 1);  // its connections reopen
  redis_.command({"HSET", "order:held", "status", "pending"});
  redis_.command({"XADD", "expiry:stream", "*", entry_field::kId, "order:held", entry_field::kPayload,
                  nlohmann::json{{"order_id", "held"}}.dump(), entry_field::kDueMs, "1", entry_field::kFiredMs, "1",
                  entry_field::kVia, entry_field::kViaSweep});
  ASSERT_TRUE(wait_until(
      [&] {
        most_fds = std::max(most_fds, open_fds(pid));
        return redis_.command({"HGET", "order:held", "status"}).str == "cancelled";
      },
      15s))
      << canceller->output();
  EXPECT_LE(most_fds, base_fds + kHttpCap + 4) << "HTTP took more descriptors than its cap";
  EXPECT_LT(file_size(canceller->log_path()) - log_before, 64 * 1024) << "log flood";

  clients.stop();
  ASSERT_TRUE(wait_until([&] { return http_get(port, "/healthz").status == 200; }, 15s)) << canceller->output();
  EXPECT_EQ(canceller->terminate(), 0);
}

}  // namespace
}  // namespace expiry::test
