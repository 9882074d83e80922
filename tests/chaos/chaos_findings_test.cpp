// Deterministic reproductions of product bugs the chaos test found; each names the fault that
// exposed it. They fail until the bug is fixed. EXPIRY_CHAOS_CANCELLER_BIN runs another build.
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "harness/child_process.h"
#include "orders/order_canceller.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;

std::string canceller_binary() {
  const char* path = std::getenv("EXPIRY_CHAOS_CANCELLER_BIN");
  return path != nullptr && *path != '\0' ? path : ORDER_CANCELLER_BIN;
}

bool loaded(SyncConnection& redis) {
  return redis.command({"INFO", "persistence"}).str.find("\r\nloading:0\r\n") != std::string::npos;
}

// Found by redis_restart: a canceller whose command connection comes back while Redis is still
// loading its AOF gets LOADING for XGROUP CREATE and never tries again, so it never reads again.
TEST(ChaosFindings, CancellerReadsAgainAfterReconnectingWhileRedisLoadsItsAof) {
  RedisServer::Options opts;
  opts.extra_config_lines = {"appendonly yes", "enable-debug-command yes"};
  RedisServer server(opts);
  {
    TestConnection redis(server.host(), server.port());
    // Enough data that loading the AOF takes a while (about 0.5 s here).
    ASSERT_EQ(redis.command({"DEBUG", "POPULATE", "1000000"}).str, "OK");
    redis.command({"BGREWRITEAOF"});
    ASSERT_TRUE(wait_until(
        [&] {
          const auto info = redis.command({"INFO", "persistence"}).str;
          return info.find("aof_rewrite_in_progress:0") != std::string::npos &&
                 info.find("aof_rewrite_scheduled:0") != std::string::npos;
        },
        30s, 100ms));
    redis.command({"FUNCTION", "LOAD", "REPLACE", orders_library_source()});
    redis.command({"XGROUP", "CREATE", "expiry:stream", "workers", "0", "MKSTREAM"});
  }
  ChildProcess canceller(canceller_binary(),
                         {"--redis-url", server.url(), "--consumer", "c1", "--block-ms", "200", "--stream",
                          "expiry:stream", "--reconnect-initial-ms", "10", "--reconnect-max-ms", "50"});
  ASSERT_TRUE(wait_until([&] { return canceller.output().find("commands connection ready") != std::string::npos; },
                         10s));
  server.stop();
  server.start();
  TestConnection redis(server.host(), server.port());
  ASSERT_TRUE(wait_until([&] { return loaded(redis); }, 30s, 20ms));
  // The LOADING reply came before the load ended; the canceller may log it a little later.
  ASSERT_TRUE(wait_until([&] { return canceller.output().find("LOADING") != std::string::npos; }, 10s))
      << "precondition: the canceller should have reconnected while Redis was loading\n"
      << canceller.output();

  redis.command({"HSET", "order:x", "status", "pending"});
  redis.command({"XADD", "expiry:stream", "*", "id", "order:x", "payload", R"({"order_id":"x"})", "due_ms", "1"});
  EXPECT_TRUE(wait_until([&] { return redis.command({"HGET", "order:x", "status"}).str == "cancelled"; }, 10s))
      << "the canceller never read the stream again; XINFO GROUPS "
      << redis.command({"XINFO", "GROUPS", "expiry:stream"}).describe() << "\n"
      << canceller.output();
}

}  // namespace
}  // namespace expiry::test
