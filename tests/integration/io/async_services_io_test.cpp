// The services' async building blocks in-process against a real redis-server: a subscription
// renewed from on_ready after its subscriber is killed, FunctionCaller reloading its library
// exactly once after FUNCTION FLUSH, and Consumer surviving handlers that throw or call
// done twice.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "consumer/consumer.h"
#include "io/function_caller.h"
#include "loop_harness.h"
#include "support/redis_client.h"

namespace expiry::test {
namespace {

using std::chrono::milliseconds;

TEST(SubscriptionIo, RenewedFromOnReadyAfterTheSubscriberIsKilled) {
  RedisServer server;
  expiry::test::TestConnection admin(server.host(), server.port());
  LoopHarness h;
  const std::string channel = "io-test:channel";

  auto sub_options = connection_options(server.port(), "subscriber");
  sub_options.watchdog = RedisConnection::Watchdog::Passive;
  RedisConnection subscriber(h.loop, sub_options);
  RedisConnection publisher(h.loop, connection_options(server.port(), "publisher"));
  int confirmations = 0;
  std::vector<std::string> messages;
  int downs = 0;
  subscriber.set_on_ready([&] {
    subscriber.subscribe({"SUBSCRIBE", channel}, [&](const Reply& m) {
      if (m.type != Reply::Type::Array || m.elements.size() != 3) return;
      if (m.elements[0].str == "subscribe") ++confirmations;
      if (m.elements[0].str == "message") messages.push_back(m.elements[2].str);
    });
  });
  subscriber.set_on_down([&](const std::string&) { ++downs; });
  subscriber.start();
  publisher.start();

  // Publishes `text` (again after each reply) until it arrives.
  auto publish_until_received = [&](const std::string& text) {
    int publishes = 0;
    int answered = 0;
    auto seen = [&] {
      for (const auto& m : messages) {
        if (m == text) return true;
      }
      return false;
    };
    return h.run_until(
        [&] {
          if (seen()) return true;
          if (publisher.ready() && answered == publishes) {
            ++publishes;
            publisher.command({"PUBLISH", channel, text}, [&](const Reply&) { ++answered; });
          }
          return false;
        },
        "message " + text + " arrives");
  };

  h.run_until([&] { return confirmations == 1; }, "subscribed");
  ASSERT_TRUE(publish_until_received("before"));

  EXPECT_GE(expiry::test::integer(admin, {"CLIENT", "KILL", "TYPE", "pubsub"}), 1);
  h.run_until([&] { return downs == 1 && confirmations == 2; }, "subscribed again after the kill");
  ASSERT_TRUE(publish_until_received("after"));
  EXPECT_EQ(subscriber.reconnects(), 1u);
}

constexpr const char* kEchoLibrary =
    "#!lua name=io_test\n"
    "redis.register_function('io_test_echo', function(keys, args) return args[1] end)\n";
constexpr const char* kOtherLibrary =
    "#!lua name=io_test\n"
    "redis.register_function('io_test_other', function(keys, args) return 1 end)\n";

long long function_loads(expiry::test::TestConnection& admin) {
  const std::string info = admin.command({"INFO", "commandstats"}).str;
  const std::string key = "cmdstat_function|load:calls=";
  const size_t at = info.find(key);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + key.size()));
}

class FunctionCallerIo : public ::testing::Test {
 protected:
  FunctionCallerIo() : admin_(server_.host(), server_.port()), conn_(h_.loop, connection_options(server_.port(), "commands")) {
    conn_.start();
    h_.run_until([&] { return conn_.ready(); }, "ready");
  }

  RedisServer server_;
  expiry::test::TestConnection admin_;
  LoopHarness h_;
  RedisConnection conn_;
};

TEST_F(FunctionCallerIo, ReloadsTheLibraryOnceAfterFunctionFlush) {
  FunctionCaller functions(conn_, kEchoLibrary);
  CallCounter loaded;
  functions.load(loaded.callback());
  h_.run_until([&] { return loaded.calls > 0; }, "library loaded");
  ASSERT_FALSE(loaded.last.failed()) << loaded.last.describe();

  CallCounter first;
  functions.fcall({"FCALL", "io_test_echo", "0", "one"}, first.callback());
  h_.run_until([&] { return first.calls > 0; }, "first FCALL");
  EXPECT_EQ(first.last.str, "one");
  EXPECT_EQ(functions.reloads(), 0u);

  ASSERT_EQ(admin_.command({"FUNCTION", "FLUSH"}).str, "OK");
  const long long loads_before = function_loads(admin_);
  CallCounter second;
  functions.fcall({"FCALL", "io_test_echo", "0", "two"}, second.callback());
  h_.run_until([&] { return second.calls > 0; }, "FCALL after FUNCTION FLUSH");
  EXPECT_EQ(second.last.str, "two") << second.last.describe();
  EXPECT_EQ(second.calls, 1);
  EXPECT_EQ(functions.reloads(), 1u);
  EXPECT_EQ(function_loads(admin_) - loads_before, 1);
}

TEST_F(FunctionCallerIo, RetriesOnlyOnceWhenTheReloadDoesNotHelp) {
  FunctionCaller functions(conn_, kOtherLibrary);  // does not define io_test_echo
  const long long loads_before = function_loads(admin_);
  CallCounter call;
  functions.fcall({"FCALL", "io_test_echo", "0", "x"}, call.callback());
  h_.run_until([&] { return call.calls > 0; }, "FCALL answered");
  // Let anything queued behind it run: a PING sent now is answered after any retry.
  CallCounter ping;
  conn_.command({"PING"}, ping.callback());
  h_.run_until([&] { return ping.calls > 0; }, "PING answered");
  EXPECT_EQ(call.calls, 1);
  EXPECT_TRUE(call.last.failed());
  EXPECT_FALSE(call.last.is_io_error()) << call.last.describe();
  EXPECT_EQ(functions.reloads(), 1u);
  EXPECT_EQ(function_loads(admin_) - loads_before, 1);
}

TEST(ConsumerIo, HandlersThatThrowOrCallDoneTwiceDoNotCrash) {
  RedisServer server;
  expiry::test::TestConnection admin(server.host(), server.port());
  LoopHarness h;

  ConsumerConfig config;
  config.redis.host = "127.0.0.1";
  config.redis.port = server.port();
  config.stream = "io-test:stream";
  config.dead_stream = "io-test:stream:dead";
  config.group = "io-test-group";
  config.consumer = "io-test-consumer";
  config.block = milliseconds(100);
  config.min_idle = milliseconds(600000);  // nothing is reclaimed during the test
  config.watchdog_timeout = milliseconds(3000);
  config.reconnect.initial = milliseconds(20);
  config.reconnect.max = milliseconds(200);

  const std::vector<std::string> modes = {"ok", "throw", "throw-other", "twice", "done-then-throw", "retry-twice"};
  for (const auto& mode : modes) admin.command({"XADD", config.stream, "*", "mode", mode});

  std::map<std::string, int> handled;
  Consumer consumer(h.loop, config, RedisLayout{}, [&](const StreamEntry& entry, const EntryContext&, EntryDone done) {
    const std::string mode = entry.field("mode");
    ++handled[mode];
    if (mode == "throw") throw std::runtime_error("handler failed");
    if (mode == "throw-other") throw 42;
    if (mode == "twice") {
      done(HandleOutcome::Done, "");
      done(HandleOutcome::Retry, "second call");
      return;
    }
    if (mode == "done-then-throw") {
      done(HandleOutcome::Done, "");
      throw std::runtime_error("after done");
    }
    if (mode == "retry-twice") {
      done(HandleOutcome::Retry, "first");
      done(HandleOutcome::Done, "second call");
      return;
    }
    done(HandleOutcome::Done, "");
  });
  consumer.start();
  // Settled: acked or released, each entry exactly once.
  h.run_until([&] { return consumer.stats().acked + consumer.stats().retried == modes.size(); }, "every entry settled");

  int stopped = 0;
  consumer.stop([&] { ++stopped; });
  h.run_until([&] { return stopped == 1; }, "the consumer stops");

  for (const auto& mode : modes) EXPECT_EQ(handled[mode], 1) << mode;
  EXPECT_EQ(consumer.stats().read, modes.size());
  EXPECT_EQ(consumer.stats().acked, 3u);    // ok, twice, done-then-throw
  EXPECT_EQ(consumer.stats().retried, 3u);  // throw, throw-other, retry-twice
  const auto pending = admin.command({"XPENDING", config.stream, config.group});
  ASSERT_EQ(pending.type, Reply::Type::Array) << pending.describe();
  EXPECT_EQ(pending.elements[0].integer, 3) << pending.describe();
  EXPECT_EQ(stopped, 1);
}

}  // namespace
}  // namespace expiry::test
