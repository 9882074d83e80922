// RedisConnection in-process against a real redis-server: every command callback runs exactly
// once whatever ends the connection (server stopped, CLIENT KILL, close() with commands in
// flight, the watchdog dropping a server stuck in DEBUG SLEEP), the connect timeout against a
// listener that never answers, the handshake stopping at its first refusal, and destruction
// inside a callback being an asserted error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "loop_harness.h"
#include "support/redis_client.h"

namespace expiry::test {
namespace {

using std::chrono::milliseconds;

int blocked_clients(expiry::test::TestConnection& admin) {
  const std::string info = admin.command({"INFO", "clients"}).str;
  const std::string key = "blocked_clients:";
  const size_t at = info.find(key);
  return at == std::string::npos ? -1 : std::stoi(info.substr(at + key.size()));
}

class RedisConnectionIo : public ::testing::Test {
 protected:
  RedisConnectionIo() : server_(server_options()), admin_(std::make_unique<expiry::test::TestConnection>(server_.host(), server_.port())) {}

  static RedisServer::Options server_options() {
    RedisServer::Options o;
    o.extra_config_lines = {"enable-debug-command yes"};
    return o;
  }

  // A connection that counts its on_ready and on_down calls; started and Ready on return.
  std::unique_ptr<RedisConnection> connect(RedisConnection::Options options) {
    auto conn = std::make_unique<RedisConnection>(h_.loop, std::move(options));
    conn->set_on_ready([this] { ++readies_; });
    conn->set_on_down([this](const std::string& why) {
      ++downs_;
      last_down_ = why;
    });
    conn->start();
    h_.run_until([&] { return conn->ready(); }, "the connection becomes ready");
    return conn;
  }

  // Sends `n` BLPOPs that block forever and waits until the server holds them all.
  std::vector<std::unique_ptr<CallCounter>> block_commands(RedisConnection& conn, int n) {
    std::vector<std::unique_ptr<CallCounter>> calls;
    for (int i = 0; i < n; ++i) {
      calls.push_back(std::make_unique<CallCounter>());
      conn.command({"BLPOP", "io-test:never-" + std::to_string(i), "0"}, calls.back()->callback());
    }
    h_.run_until([&] { return blocked_clients(*admin_) == 1; }, "the BLPOPs block on the server");
    return calls;
  }

  static bool all_called(const std::vector<std::unique_ptr<CallCounter>>& calls) {
    for (const auto& c : calls) {
      if (c->calls == 0) return false;
    }
    return true;
  }

  static void expect_each_failed_once(const std::vector<std::unique_ptr<CallCounter>>& calls) {
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i]->calls, 1) << "callback " << i;
      EXPECT_TRUE(calls[i]->last.is_io_error()) << "callback " << i << ": " << calls[i]->last.describe();
    }
  }

  RedisServer server_;
  std::unique_ptr<expiry::test::TestConnection> admin_;
  LoopHarness h_;
  int readies_ = 0;
  int downs_ = 0;
  std::string last_down_;
};

TEST_F(RedisConnectionIo, ServerStoppedFailsEveryPendingCommandOnce) {
  auto conn = connect(connection_options(server_.port(), "commands"));
  auto calls = block_commands(*conn, 5);
  admin_.reset();
  server_.stop();
  h_.run_until([&] { return all_called(calls); }, "every pending callback runs");
  expect_each_failed_once(calls);
  EXPECT_FALSE(conn->ready());

  // Back again: the connection reconnects by itself, and no callback runs a second time.
  server_.start();
  h_.run_until([&] { return conn->ready(); }, "the connection is ready again");
  EXPECT_EQ(readies_, 2);
  EXPECT_EQ(downs_, 1);
  CallCounter ping;
  conn->command({"PING"}, ping.callback());
  h_.run_until([&] { return ping.calls > 0; }, "PING answered");
  EXPECT_EQ(ping.last.str, "PONG");
  expect_each_failed_once(calls);
}

TEST_F(RedisConnectionIo, ClientKillFailsEveryPendingCommandOnce) {
  auto conn = connect(connection_options(server_.port(), "commands"));
  CallCounter id;
  conn->command({"CLIENT", "ID"}, id.callback());
  h_.run_until([&] { return id.calls > 0; }, "CLIENT ID answered");
  ASSERT_EQ(id.last.type, Reply::Type::Integer);
  auto calls = block_commands(*conn, 3);

  EXPECT_EQ(expiry::test::integer(*admin_, {"CLIENT", "KILL", "ID", std::to_string(id.last.integer)}), 1);
  h_.run_until([&] { return all_called(calls); }, "every pending callback runs");
  expect_each_failed_once(calls);
  h_.run_until([&] { return readies_ == 2; }, "the connection reconnects");
  EXPECT_EQ(downs_, 1);
  EXPECT_EQ(id.calls, 1);
  expect_each_failed_once(calls);
}

TEST_F(RedisConnectionIo, CloseWithCommandsInFlightAnswersEachOnceThenCloses) {
  auto conn = connect(connection_options(server_.port(), "commands"));
  int closed = 0;
  conn->set_on_closed([&] { ++closed; });
  std::vector<std::unique_ptr<CallCounter>> calls;
  for (int i = 0; i < 20; ++i) {
    calls.push_back(std::make_unique<CallCounter>());
    conn->command({"INCR", "io-test:counter"}, calls.back()->callback());
  }
  calls.push_back(std::make_unique<CallCounter>());
  conn->command({"BLPOP", "io-test:never", "0.2"}, calls.back()->callback());  // answered (nil) after 200 ms
  conn->close();
  CallCounter after_close;
  conn->command({"PING"}, after_close.callback());

  h_.run_until([&] { return closed > 0 && all_called(calls) && after_close.calls > 0; }, "close completes");
  for (size_t i = 0; i + 1 < calls.size(); ++i) {
    EXPECT_EQ(calls[i]->calls, 1) << "INCR " << i;
    EXPECT_EQ(calls[i]->last.type, Reply::Type::Integer) << "INCR " << i << ": " << calls[i]->last.describe();
  }
  EXPECT_EQ(calls.back()->calls, 1);
  EXPECT_EQ(calls.back()->last.type, Reply::Type::Nil) << calls.back()->last.describe();
  EXPECT_EQ(after_close.calls, 1);
  EXPECT_TRUE(after_close.last.is_io_error());
  EXPECT_EQ(closed, 1);
  EXPECT_EQ(admin_->command({"GET", "io-test:counter"}).str, "20");
  EXPECT_EQ(downs_, 0);  // a close is not a loss
}

TEST_F(RedisConnectionIo, WatchdogDropsASleepingServerAndFailsEachCommandOnce) {
  auto options = connection_options(server_.port(), "commands");
  options.watchdog_timeout = milliseconds(300);
  options.connect_timeout = milliseconds(5000);
  auto conn = connect(options);
  LogCapture log;
  std::vector<std::unique_ptr<CallCounter>> calls;
  calls.push_back(std::make_unique<CallCounter>());
  conn->command({"DEBUG", "SLEEP", "1.5"}, calls.back()->callback());
  for (int i = 0; i < 3; ++i) {
    calls.push_back(std::make_unique<CallCounter>());
    conn->command({"PING"}, calls.back()->callback());
  }
  h_.run_until([&] { return all_called(calls); }, "the watchdog fails the pending commands");
  expect_each_failed_once(calls);
  EXPECT_EQ(downs_, 1);
  EXPECT_NE(last_down_.find("no reply for"), std::string::npos) << last_down_;

  // The server wakes up and the connection comes back; nothing is called twice.
  h_.run_until([&] { return readies_ == 2; }, "the connection is ready again after the sleep");
  expect_each_failed_once(calls);
}

// The watchdog judges the oldest unanswered command's age, not the silence: a connection idle
// for many watchdog timeouts whose next command takes most of a timeout to answer is healthy.
TEST_F(RedisConnectionIo, AnIdleConnectionIsKeptWhenItsNextCommandTakesAlmostTheTimeout) {
  auto options = connection_options(server_.port(), "commands");
  options.watchdog = RedisConnection::Watchdog::Passive;  // no PINGs: the connection stays silent
  options.watchdog_interval = milliseconds(20);
  options.watchdog_timeout = milliseconds(600);
  auto conn = connect(options);
  for (int round = 0; round < 3; ++round) {
    const auto idle_until = Clock::now() + milliseconds(1500);  // idle for 2.5 timeouts
    h_.run_until([&] { return Clock::now() >= idle_until; }, "an idle spell");
    CallCounter slow;
    conn->command({"BLPOP", "io-test:nothing", "0.3"}, slow.callback());  // answers nil after 300 ms
    h_.run_until([&] { return slow.calls > 0; }, "the slow command's reply");
    EXPECT_EQ(slow.last.type, Reply::Type::Nil) << "round " << round << ": " << slow.last.describe();
  }
  EXPECT_EQ(downs_, 0) << last_down_;
  EXPECT_EQ(conn->reconnects(), 0u);
  EXPECT_TRUE(conn->ready());
}

TEST_F(RedisConnectionIo, ASubscribeHiredisRefusesToSendForcesAReconnect) {
  auto conn = connect(connection_options(server_.port(), "subscriber"));
  // hiredis (0.14 and 1.2 alike) refuses (P)UNSUBSCRIBE on a context that is not subscribed.
  int messages = 0;
  conn->subscribe({"UNSUBSCRIBE"}, [&](const Reply&) { ++messages; });
  h_.run_until([&] { return readies_ == 2; }, "the refused send forces a reconnect");
  EXPECT_EQ(downs_, 1);
  EXPECT_NE(last_down_.find("cannot send UNSUBSCRIBE"), std::string::npos) << last_down_;
  EXPECT_EQ(messages, 0);
}

TEST_F(RedisConnectionIo, CommandsBeforeReadyFailOnce) {
  RedisConnection conn(h_.loop, connection_options(server_.port(), "commands"));
  CallCounter early;
  conn.command({"PING"}, early.callback());  // not started: refused, on the loop, not inline
  EXPECT_EQ(early.calls, 0);
  conn.start();
  h_.run_until([&] { return conn.ready(); }, "ready");
  EXPECT_EQ(early.calls, 1);
  EXPECT_TRUE(early.last.is_io_error());
}

TEST_F(RedisConnectionIo, DeferredWorkOfADestroyedConnectionIsDropped) {
  auto conn = connect(connection_options(server_.port(), "commands"));
  int closed = 0;
  conn->set_on_closed([&] { ++closed; });
  conn->force_reconnect("test");  // deferred: needs the connection
  conn->close();                  // deferred: needs the connection
  conn.reset();                   // before the loop runs either
  // Closed before it ever connected: on_closed is deferred at once, then the owner goes away.
  auto idle = std::make_unique<RedisConnection>(h_.loop, connection_options(server_.port(), "idle"));
  int idle_closed = 0;
  idle->set_on_closed([&] { ++idle_closed; });
  idle->close();
  idle.reset();
  // A marker deferred after them: once it has run, so have they (or they were dropped).
  bool marker = false;
  h_.loop.defer([&] { marker = true; });
  h_.run_until([&] { return marker; }, "the deferred marker runs");
  EXPECT_EQ(closed, 0);
  EXPECT_EQ(idle_closed, 0);
}

TEST_F(RedisConnectionIo, DestroyingTheConnectionInsideItsCallbackIsAnAssertedError) {
  GTEST_FLAG_SET(death_test_style, "fast");  // fork: the child leaves the parent's server alone
  EXPECT_DEATH(
      {
        LoopHarness h;
        auto conn = std::make_unique<RedisConnection>(h.loop, connection_options(server_.port(), "commands"));
        conn->start();
        h.run_until([&] { return conn->ready(); }, "ready");
        bool called = false;
        conn->command({"PING"}, [&](const Reply&) {
          called = true;
          conn.reset();
        });
        h.run_until([&] { return called; }, "PING answered");
      },
      "destroyed from inside its own callback");
}

// A listener that accepts nothing: the kernel completes the TCP handshake, but no byte is ever
// answered, so the connect timeout (which covers the handshake) must end each attempt.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 8) != 0) {
      throw std::runtime_error("cannot open a loopback listener");
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(RedisConnectionTimeoutIo, ConnectTimeoutAgainstAListenerThatNeverAnswers) {
  SilentListener listener;
  LoopHarness h;
  LogCapture log;
  auto options = connection_options(listener.port(), "commands");
  options.connect_timeout = milliseconds(200);
  RedisConnection conn(h.loop, options);
  int readies = 0;
  conn.set_on_ready([&] { ++readies; });
  const auto started = Clock::now();
  conn.start();
  CallCounter early;
  conn.command({"PING"}, early.callback());
  h.run_until([&] { return log.count("connect timeout after 200 ms") >= 2; }, "two attempts time out");
  EXPECT_GE(Clock::now() - started, milliseconds(400));
  EXPECT_EQ(readies, 0);
  EXPECT_FALSE(conn.ready());
  EXPECT_EQ(early.calls, 1);
  EXPECT_TRUE(early.last.is_io_error());
  int closed = 0;
  conn.set_on_closed([&] { ++closed; });
  conn.close();
  h.run_until([&] { return closed == 1; }, "close while connecting");
}

TEST(RedisConnectionHandshakeIo, StopsAtTheFirstRefusal) {
  RedisServer::Options server_options;
  server_options.extra_config_lines = {"requirepass right-password"};
  RedisServer server(server_options);
  LoopHarness h;
  LogCapture log;
  auto options = connection_options(server.port(), "commands");
  options.endpoint.password = "wrong-password";
  options.endpoint.db = 1;  // AUTH, SELECT, CLIENT SETNAME, PING: every step is refused
  options.backoff.initial = milliseconds(60000);
  options.backoff.max = milliseconds(60000);
  RedisConnection conn(h.loop, options);
  int refusals = 0;
  std::string refused;
  conn.set_on_handshake_error([&](const Reply& r) {
    ++refusals;
    refused = r.str;
  });
  conn.start();
  h.run_until([&] { return log.contains("failed: AUTH refused"); }, "the attempt fails");
  EXPECT_EQ(refusals, 1);
  EXPECT_NE(refused.find("WRONGPASS"), std::string::npos) << refused;
  // The refusal is said once when the owner hears of it, and once more by the retry: never for
  // SELECT, CLIENT SETNAME or PING, which the refusal stopped.
  EXPECT_EQ(log.count("AUTH refused"), 2u) << log.text();
  EXPECT_EQ(log.count("refused"), 2u) << log.text();
  EXPECT_FALSE(conn.ready());
}

}  // namespace
}  // namespace expiry::test
