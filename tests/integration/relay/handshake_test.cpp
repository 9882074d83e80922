// The connection handshake (src/io/redis_connection.cpp): a connection is Ready only after a
// PONG (or a server-state error that proves it is Redis), stops at the first refusal, retries
// transient refusals with growing backoff, and exits 2 only for refusals that retrying cannot
// cure. Peers that accept and then fail: a non-Redis server, Redis at maxclients, a Redis that
// wants a password the relay was not given.
#include <atomic>
#include <thread>

#include "integration/relay/relay_harness.h"

namespace expiry::test {
namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A loopback server that accepts every connection, answers it with an HTTP error and closes
// it: what a relay pointed at the wrong port meets. Counts the connections.
class FakeHttpServer {
 public:
  FakeHttpServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd_, 64) != 0) {
      throw std::runtime_error("cannot listen");
    }
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    timeval tv{0, 100000};  // accept() wakes up to notice the stop flag
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeHttpServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  int accepted() const { return accepted_; }

 private:
  void serve() {
    while (!stop_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      ++accepted_;
      const std::string answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

TEST(Handshake, ANonRedisServerIsNeverReadyAndIsRetriedWithGrowingBackoff) {
  FakeHttpServer http;
  ChildProcess relay(EXPIRY_RELAY_BIN, {"--redis-url", "redis://127.0.0.1:" + std::to_string(http.port()) + "/0",
                                        "--reconnect-initial-ms", "20", "--reconnect-max-ms", "2000"});
  // Before the fix each connection was declared ready and retried at the initial delay: about
  // 30 connections a second. With backoff doubling from 20 ms to 2 s, about 7 in 4 s for each
  // of the relay's two connections.
  ASSERT_TRUE(wait_until([&] { return http.accepted() >= 4; }, 10s)) << relay.output();
  const auto first = std::chrono::steady_clock::now();
  const int at_first = http.accepted();
  ASSERT_TRUE(wait_until([&] { return std::chrono::steady_clock::now() - first >= 4s; }, 10s, 50ms));
  const int in_four_seconds = http.accepted() - at_first;
  EXPECT_LE(in_four_seconds, 16) << "backoff does not grow:\n" << relay.output();
  EXPECT_TRUE(relay.running());
  const auto out = relay.output();
  EXPECT_EQ(count_of(out, "connection ready"), 0u) << out;
  EXPECT_NE(out.find("Protocol error"), std::string::npos) << "the log must say why:\n" << out;
  EXPECT_EQ(relay.terminate(), 0);
}

// Redis at maxclients answers "-ERR max number of clients reached" and closes: transient. With
// a password too, it is retried (it used to exit 2, the code for a wrong password).
class MaxClientsTest : public ::testing::TestWithParam<bool> {};

TEST_P(MaxClientsTest, IsRetriedUntilASlotFreesAndTheReasonIsLogged) {
  const bool with_password = GetParam();
  RedisServer::Options opts;
  opts.extra_config_lines = {"maxclients 4"};
  if (with_password) opts.extra_config_lines.push_back("requirepass s3cret");
  RedisServer server(opts);
  auto fill = [&] {
    auto c = connect_redis(server.host(), server.port());
    if (with_password) c->command({"AUTH", "s3cret"});
    return c;
  };
  std::vector<std::unique_ptr<SyncConnection>> holders;
  for (int i = 0; i < 4; ++i) holders.push_back(fill());  // every slot taken
  const std::string url = with_password ? "redis://:s3cret@127.0.0.1:" + std::to_string(server.port()) + "/0"
                                        : server.url();
  ChildProcess relay(EXPIRY_RELAY_BIN, {"--redis-url", url, "--instance", "r1", "--reconnect-initial-ms", "20",
                                        "--reconnect-max-ms", "500"});
  ASSERT_TRUE(wait_until([&] { return count_of(relay.output(), "max number of clients reached") >= 3; }, 10s))
      << relay.output();
  EXPECT_TRUE(relay.running()) << "a momentary maxclients is not a configuration error:\n" << relay.output();
  EXPECT_EQ(count_of(relay.output(), "connection ready"), 0u) << relay.output();
  holders.clear();  // slots free up
  TestConnection redis(server.host(), server.port());
  if (with_password) redis.command({"AUTH", "s3cret"});
  ASSERT_TRUE(wait_until([&] { return relay_ready(redis, "r1"); }, 10s)) << relay.output();
  schedule_all(redis, {{"after", 50, "p"}});
  ASSERT_TRUE(wait_until([&] { return xlen(redis) == 1; }, 10s)) << relay.output();
  EXPECT_EQ(relay.terminate(), 0);
  EXPECT_EQ(relay.output().find("s3cret"), std::string::npos) << "the password leaked into the log";
}

INSTANTIATE_TEST_SUITE_P(Handshake, MaxClientsTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("WithPassword") : std::string("WithoutPassword");
                         });

TEST(Handshake, ARedisThatWantsAPasswordTheRelayLacksExitsTwoWithAHint) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"requirepass s3cret"};
  RedisServer server(opts);
  ChildProcess relay(EXPIRY_RELAY_BIN, {"--redis-url", server.url(), "--reconnect-initial-ms", "20"});
  auto code = relay.wait_exit(10s);
  ASSERT_TRUE(code.has_value()) << "it kept retrying:\n" << relay.output();
  EXPECT_EQ(*code, 2);
  const auto out = relay.output();
  EXPECT_NE(out.find("Redis at " + server.url() + " refused to run commands without a password: NOAUTH"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("password_file"), std::string::npos) << "the message must say what to set:\n" << out;
  for (const char* command : {"INFO cluster", "CLIENT SETNAME", "PING"}) {
    EXPECT_EQ(out.find(command), std::string::npos) << "an internal command name, " << command << ":\n" << out;
  }
  EXPECT_EQ(count_of(out, "connection ready"), 0u) << out;
  EXPECT_EQ(out.find("retrying in"), std::string::npos) << "no retry line before the exit:\n" << out;
}

}  // namespace
}  // namespace expiry::test
