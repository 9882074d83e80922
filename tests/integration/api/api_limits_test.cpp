// expiry-api's connection limits against a private redis-server: a slowloris client (a request
// head a byte at a time) and 1,000 idle connections do not keep others from their answers, the
// per-thread connection cap closes connections beyond it, and the idle timeout closes idle ones.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "integration/api/api_harness.h"

namespace expiry::test {
namespace {

using Clock = std::chrono::steady_clock;

// Raises the soft descriptor limit to at least `wanted` (bounded by the hard limit); false when
// the hard limit is lower.
bool raise_fd_limit_to(rlim_t wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return false;
  if (lim.rlim_cur >= wanted) return true;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < wanted) return false;
  lim.rlim_cur = wanted;
  return setrlimit(RLIMIT_NOFILE, &lim) == 0;
}

class ApiLimitsTest : public ::testing::Test {
 protected:
  RedisServer server_;
};

// At a low descriptor limit (64 here, `prlimit` before exec) the default --threads 2 x
// --max-connections 4096 is clamped at start, with a message; a crowd of idle connections from
// anyone neither makes the API spin on accept() (CPU over 3 s stays well under what a spinning
// core burns) nor floods its log, and once they leave the API answers again.
TEST_F(ApiLimitsTest, AtTheDescriptorLimitItNeitherSpinsNorFloodsItsLog) {
  ASSERT_TRUE(raise_fd_limit_to(1024)) << "precondition: the test's own sockets";
  ScratchDir scratch("expiry_api_fd");
  const std::string tokens = scratch.write("tokens", tokens_file_text());
  const int port = free_port();
  ChildProcess api("/usr/bin/prlimit",
                   {"--nofile=64:64", "--", EXPIRY_API_BIN, "--listen", "127.0.0.1:" + std::to_string(port),
                    "--tokens-file", tokens, "--redis-url", server_.url(), "--threads", "2"},
                   std::vector<std::pair<std::string, std::string>>{}, server_.dir() + "/api-fd.log");
  ASSERT_TRUE(wait_until([&] { return !api.running() || call_api(port, {"GET", "/healthz"}).status == 200; }, 20s))
      << api.output();
  ASSERT_TRUE(api.running()) << api.output();
  EXPECT_NE(api.output().find("does not fit the descriptor limit 64"), std::string::npos) << api.output();

  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) {
    const int fd = connect_loopback(port);  // the backlog takes them even when the API cannot
    if (fd >= 0) idle.push_back(fd);
  }
  ASSERT_GE(idle.size(), 100u);
  const size_t log_before = api.output().size();
  const double cpu_before = process_cpu_seconds(api.pid());
  const auto started = Clock::now();
  std::this_thread::sleep_for(3s);  // the span over which CPU is measured, not a wait for an outcome
  const double cpu = process_cpu_seconds(api.pid()) - cpu_before;
  const double wall = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_LT(cpu, 0.5 * wall) << "expiry-api spent " << cpu << " s of CPU in " << wall << " s with "
                             << idle.size() << " idle connections";
  EXPECT_LT(api.output().size() - log_before, 16u * 1024) << api.output().substr(log_before, 2000);
  for (int fd : idle) ::close(fd);
  EXPECT_TRUE(wait_until([&] { return call_api(port, {"GET", "/healthz"}).status == 200; }, 30s))
      << "the API did not answer again once the idle connections left:\n" << api.output();
  EXPECT_EQ(api.terminate(), 0) << api.output();
}

TEST_F(ApiLimitsTest, SlowlorisDoesNotDelayOtherClients) {
  ApiProcess api(server_, {"--threads", "1"});  // one event loop: the slow client shares it
  const int slow = connect_loopback(api.port());
  ASSERT_GE(slow, 0);
  std::atomic<bool> done{false};
  std::atomic<size_t> sent{0};
  const std::string head = "GET /v1/stats HTTP/1.1\r\nHost: localhost\r\nX-Padding: " + std::string(200, 'p') + "\r\n";
  std::thread slowloris([&] {
    for (char c : head) {
      if (done) break;
      if (::send(slow, &c, 1, MSG_NOSIGNAL) != 1) break;
      ++sent;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  // While the slow head trickles in, other clients are answered at once.
  int answered = 0;
  auto worst = Clock::duration::zero();
  while (sent < head.size() / 2 && answered < 200) {
    const auto started = Clock::now();
    const HttpAnswer r = api.call({"GET", "/v1/stats", kReadToken});
    worst = std::max(worst, Clock::now() - started);
    ASSERT_EQ(r.status, 200) << r.body << r.error;
    ++answered;
  }
  done = true;
  slowloris.join();
  EXPECT_GE(answered, 5);
  EXPECT_LT(worst, std::chrono::seconds(2)) << "slowest answer while the slow client sent its head";
  EXPECT_TRUE(api.child().running());
  ::close(slow);
}

TEST_F(ApiLimitsTest, ThousandIdleConnectionsLeaveRoomForARequest) {
  if (!raise_fd_limit_to(4096))
    GTEST_SKIP() << "the hard descriptor limit is below 4096 (1,000 sockets here and there)";
  ApiProcess api(server_);
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    const int fd = connect_loopback(api.port());
    ASSERT_GE(fd, 0) << "connection " << i << ": " << std::strerror(errno);
    idle.push_back(fd);
  }
  EXPECT_TRUE(wait_until([&] { return open_connections(api.port()) >= 1001; }, std::chrono::seconds(30),
                         std::chrono::milliseconds(50)))
      << "open connections: " << open_connections(api.port());
  const auto started = Clock::now();
  const HttpAnswer r = api.call({"PUT", "/v1/tasks/busy", kWriteToken, std::string(R"({"delay_ms": 60000})")});
  EXPECT_EQ(r.status, 201) << r.body << r.error;
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
  for (int fd : idle) ::close(fd);
  // Every close is seen: the count goes back to the metrics request alone.
  EXPECT_TRUE(wait_until([&] { return open_connections(api.port()) == 1; }, std::chrono::seconds(30),
                         std::chrono::milliseconds(50)))
      << "open connections: " << open_connections(api.port());
}

TEST_F(ApiLimitsTest, ConnectionsBeyondTheCapAreClosed) {
  ApiProcess api(server_, {"--threads", "1", "--max-connections", "5"});
  std::vector<int> idle;
  for (int i = 0; i < 5; ++i) idle.push_back(connect_loopback(api.port()));
  // Once the five are accepted, a sixth connection is closed without being served.
  bool refused = wait_until(
      [&] {
        const int fd = connect_loopback(api.port());
        if (fd < 0) return false;
        const std::string req = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
        ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
        bool closed = false;
        const std::string answer = read_until_closed(fd, std::chrono::seconds(5), &closed);
        ::close(fd);
        // Shut down unanswered, or (when its request beat the shutdown) answered 503 and closed.
        return closed && (answer.empty() || answer.rfind("HTTP/1.1 503", 0) == 0);
      },
      std::chrono::seconds(20), std::chrono::milliseconds(20));
  EXPECT_TRUE(refused);
  // One slot freed: requests are served again.
  ::close(idle.back());
  idle.pop_back();
  EXPECT_TRUE(wait_until(
      [&] {
        return call_api(api.port(), {"GET", "/healthz"}).status == 200;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(20)));
  const HttpAnswer metrics = call_api(api.port(), {"GET", "/metrics"});
  EXPECT_EQ(metrics.body.find("expiry_api_connections_refused_total 0\n"), std::string::npos) << metrics.body;
  for (int fd : idle) ::close(fd);
}

TEST_F(ApiLimitsTest, IdleConnectionIsClosedAfterTheTimeout) {
  ApiProcess api(server_, {"--http-timeout-s", "1"});
  const int fd = connect_loopback(api.port());
  ASSERT_GE(fd, 0);
  const std::string partial = "GET /healthz HTTP/1.1\r\nHost: loc";  // a head never finished
  ::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL);
  bool closed = false;
  read_until_closed(fd, std::chrono::seconds(20), &closed);
  EXPECT_TRUE(closed);
  ::close(fd);
}

// A request head trickling in is dropped at --request-deadline-s after its first byte, however
// often a byte arrives (the idle timeout alone would never fire).
TEST_F(ApiLimitsTest, SlowRequestIsDroppedAtTheDeadline) {
  ApiProcess api(server_, {"--request-deadline-s", "1", "--http-timeout-s", "30"});
  const int fd = connect_loopback(api.port());
  ASSERT_GE(fd, 0);
  const std::string head =
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Padding: " + std::string(400, 'p') + "\r\n\r\n";
  std::atomic<bool> stop{false};
  std::atomic<size_t> sent{0};
  std::thread slow([&] {
    for (char c : head) {
      if (stop || ::send(fd, &c, 1, MSG_NOSIGNAL) != 1) break;
      ++sent;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the client's pace, not a wait
    }
  });
  const auto started = Clock::now();
  bool closed = false;
  const std::string answer = read_until_closed(fd, std::chrono::seconds(20), &closed);
  const auto took = Clock::now() - started;
  stop = true;
  slow.join();
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_TRUE(answer.empty()) << answer;
  EXPECT_LT(sent.load(), head.size()) << "the whole head was sent before the connection was dropped";
  EXPECT_LT(took, std::chrono::seconds(10));
  EXPECT_EQ(call_api(api.port(), {"GET", "/healthz"}).status, 200);
}

// SIGTERM closes idle keep-alive connections at once: the process exits long before the grace.
TEST_F(ApiLimitsTest, SigtermClosesIdleConnectionsAtOnce) {
  ApiProcess api(server_, {"--stop-grace-ms", "60000"});
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) {
    const int fd = connect_loopback(api.port());
    ASSERT_GE(fd, 0);
    idle.push_back(fd);
  }
  // One of them has had an answer and stays open (HTTP/1.1 keep-alive).
  const std::string req = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ASSERT_EQ(::send(idle[0], req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  char buf[512];
  ASSERT_GT(::recv(idle[0], buf, sizeof buf, 0), 0);
  const auto started = Clock::now();
  ASSERT_TRUE(api.child().send_signal(SIGTERM));
  const auto rc = api.child().wait_exit(std::chrono::seconds(30));
  ASSERT_TRUE(rc) << "still running 30 s after SIGTERM with idle connections";
  EXPECT_EQ(*rc, 0) << api.child().output();
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(10));
  for (int fd : idle) {
    bool closed = false;
    read_until_closed(fd, std::chrono::seconds(10), &closed);
    EXPECT_TRUE(closed);
    ::close(fd);
  }
}

}  // namespace
}  // namespace expiry::test
