// TcpProxy against a real redis-server: forwarding, cut (refuse and hold), restore, and the
// backpressure that lets Redis see a subscriber that does not read.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "chaos/tcp_proxy.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

// A raw loopback client socket with a receive timeout; -1 if connect fails.
int connect_raw(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{0, 300000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends an inline PING and returns what came back within the receive timeout ("" for nothing,
// "EOF" for a closed or reset connection).
std::string ping_raw(int fd) {
  ::send(fd, "PING\r\n", 6, MSG_NOSIGNAL);
  char buf[64];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  if (n == 0 || (n < 0 && errno == ECONNRESET)) return "EOF";
  if (n < 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

TEST(TcpProxy, ForwardsCommandsAndReplies) {
  RedisServer server;
  TcpProxy proxy(server.port());
  TestConnection redis("127.0.0.1", proxy.port());
  EXPECT_EQ(redis.command({"SET", "k", std::string(100000, 'x')}).str, "OK");  // larger than the buffers
  EXPECT_EQ(redis.command({"GET", "k"}).str.size(), 100000u);
  EXPECT_EQ(proxy.connections(), 1u);
}

TEST(TcpProxy, CutClosesConnectionsAndRefusesNewOnesUntilRestored) {
  RedisServer server;
  TcpProxy proxy(server.port());
  auto redis = connect_redis("127.0.0.1", proxy.port());
  ASSERT_EQ(redis->command({"PING"}).str, "PONG");
  proxy.cut(TcpProxy::CutMode::Refuse);
  EXPECT_TRUE(proxy.is_cut());
  EXPECT_EQ(proxy.connections(), 0u);
  EXPECT_THROW(redis->command({"PING"}), std::runtime_error);
  const int fd = connect_raw(proxy.port());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ping_raw(fd), "EOF");
  ::close(fd);
  proxy.restore();
  redis = connect_redis("127.0.0.1", proxy.port());
  EXPECT_EQ(redis->command({"PING"}).str, "PONG");
}

TEST(TcpProxy, HeldConnectionsGetNoAnswerUntilRestored) {
  RedisServer server;
  TcpProxy proxy(server.port());
  proxy.cut(TcpProxy::CutMode::Hold);
  const int fd = connect_raw(proxy.port());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ping_raw(fd), "");  // connected (backlog), but nothing answers
  proxy.restore();
  char buf[64];
  std::string got;
  ASSERT_TRUE(wait_until(
      [&] {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) got.append(buf, static_cast<size_t>(n));
        return got == "+PONG\r\n";
      },
      5s));
  ::close(fd);
}

TEST(TcpProxy, UpstreamDownClosesTheClient) {
  RedisServer server;
  TcpProxy proxy(server.port());
  server.stop();
  const int fd = connect_raw(proxy.port());
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ping_raw(fd), "EOF");
  ::close(fd);
  server.start();
  TestConnection redis("127.0.0.1", proxy.port());
  EXPECT_EQ(redis.command({"PING"}).str, "PONG");
}

TEST(TcpProxy, ASubscriberThatDoesNotReadIsDroppedByRedis) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"client-output-buffer-limit pubsub 256kb 128kb 1"};
  RedisServer server(opts);
  TcpProxy proxy(server.port());
  const int fd = connect_raw(proxy.port());
  ASSERT_GE(fd, 0);
  const std::string sub = "SUBSCRIBE ch\r\n";
  ::send(fd, sub.data(), sub.size(), MSG_NOSIGNAL);
  TestConnection redis(server.host(), server.port());
  ASSERT_TRUE(wait_until([&] { return redis.command({"PUBSUB", "NUMSUB", "ch"}).elements.at(1).integer == 1; }, 5s));
  // Never read from fd: 4 MB of messages cannot all sit in the proxy and kernel buffers.
  const std::string message(1000, 'm');
  for (int i = 0; i < 4000; ++i) redis.command({"PUBLISH", "ch", message});
  EXPECT_TRUE(wait_until([&] { return redis.command({"PUBSUB", "NUMSUB", "ch"}).elements.at(1).integer == 0; }, 5s));
  EXPECT_NE(server.log().find("overcoming of output buffer limits"), std::string::npos);
  ::close(fd);
}

}  // namespace
}  // namespace expiry::test
