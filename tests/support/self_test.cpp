// Self tests for expiry_test_support (needs redis-server: support/server_binaries.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/child_process.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {
namespace {

using namespace std::chrono_literals;
using Type = Reply::Type;

// A test connection whose connect attempt gives up after 200 ms.
void connect_within_200ms(const std::string& host, int port) {
    SyncConnection::Options options = test_connection_options();
    options.connect_timeout = 200ms;
    SyncConnection redis(test_endpoint(host, port), options);
}

TEST(WaitUntil, ReturnsTrueOnceConditionHolds) {
    int calls = 0;
    EXPECT_TRUE(wait_until([&] { return ++calls >= 3; }, 1s, 1ms));
    EXPECT_EQ(calls, 3);
}

TEST(WaitUntil, ReturnsFalseAfterDeadlineAndChecksAtTheEnd) {
    const auto start = std::chrono::steady_clock::now();
    int calls = 0;
    EXPECT_FALSE(wait_until([&] { ++calls; return false; }, 50ms, 20ms));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
    EXPECT_GE(calls, 3);  // t=0, 20, 40, and the final check at 50
}

TEST(RedisServer, SetGetThroughTestConnection) {
    RedisServer server;
    EXPECT_EQ(server.host(), "127.0.0.1");
    EXPECT_EQ(server.url(), "redis://127.0.0.1:" + std::to_string(server.port()) + "/0");
    EXPECT_EQ(server.url(3), "redis://127.0.0.1:" + std::to_string(server.port()) + "/3");
    EXPECT_TRUE(std::filesystem::is_directory(server.dir()));

    TestConnection redis(server.host(), server.port());
    const std::string binary("a\0b\r\nc", 6);
    EXPECT_EQ(redis.command({"SET", "k", binary}).str, "OK");
    Reply got = redis.command({"GET", "k"});
    ASSERT_EQ(got.type, Type::String);
    EXPECT_EQ(got.str, binary);
    EXPECT_EQ(redis.command({"GET", "missing"}).type, Type::Nil);
    EXPECT_EQ(integer(redis, {"INCR", "n"}), 1);
    EXPECT_THROW(integer(redis, {"GET", "k"}), std::runtime_error);

    Reply err = redis.command({"NOSUCHCOMMAND"});
    EXPECT_TRUE(err.failed()) << err.describe();

    Reply cfg = redis.command({"CONFIG", "GET", "notify-keyspace-events"});
    ASSERT_EQ(cfg.type, Type::Array) << cfg.describe();
    ASSERT_EQ(cfg.elements.size(), 2u);
    EXPECT_NE(cfg.elements[1].str.find('E'), std::string::npos);
    EXPECT_NE(cfg.elements[1].str.find('x'), std::string::npos);
}

TEST(RedisServer, OptionsAreApplied) {
    RedisServer::Options opts;
    opts.notify_expired = false;
    opts.extra_config_lines = {"hz 50"};
    RedisServer server(opts);
    TestConnection redis(server.host(), server.port());
    EXPECT_EQ(redis.command({"CONFIG", "GET", "notify-keyspace-events"}).elements.at(1).str, "");
    EXPECT_EQ(redis.command({"CONFIG", "GET", "hz"}).elements.at(1).str, "50");
}

TEST(RedisServer, BadConfigThrowsWithLog) {
    RedisServer::Options opts;
    opts.extra_config_lines = {"this-is-not-a-directive 1"};
    try {
        RedisServer server(opts);
        FAIL() << "expected std::runtime_error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("this-is-not-a-directive"), std::string::npos)
            << e.what();
    }
}

TEST(TestConnection, PipelineThousandSets) {
    RedisServer server;
    TestConnection redis(server.host(), server.port());
    std::vector<std::vector<std::string>> cmds;
    for (int i = 0; i < 1000; ++i) cmds.push_back({"SET", "key:" + std::to_string(i), std::to_string(i)});
    std::vector<Reply> replies;
    pipeline(redis, cmds, &replies);
    ASSERT_EQ(replies.size(), 1000u);
    for (const auto& r : replies) EXPECT_EQ(r.str, "OK");
    EXPECT_EQ(integer(redis, {"DBSIZE"}), 1000);
    EXPECT_EQ(redis.command({"GET", "key:999"}).str, "999");

    pipeline(redis, cmds);  // no out: errors would throw
    EXPECT_THROW(pipeline(redis, {{"SET", "a", "1"}, {"INCR", "key:x"}, {"LPUSH", "a", "x"}}),
                 std::runtime_error);
    EXPECT_EQ(redis.command({"PING"}).str, "PONG");  // connection still in sync
}

TEST(TestConnection, XrangeAllPagesThroughLargeStreams) {
    RedisServer server;
    TestConnection redis(server.host(), server.port());
    EXPECT_TRUE(xrange_all(redis, "nostream").empty());

    std::vector<std::vector<std::string>> cmds;
    for (int i = 0; i < 10005; ++i)
        cmds.push_back({"XADD", "s", "*", "n", std::to_string(i), "kind", "expired"});
    pipeline(redis, cmds);
    auto entries = xrange_all(redis, "s");
    ASSERT_EQ(entries.size(), 10005u);
    for (size_t i = 0; i < entries.size(); ++i) ASSERT_EQ(entries[i].at("n"), std::to_string(i));
    EXPECT_EQ(entries[0].at("kind"), "expired");
    EXPECT_FALSE(entries[0].at("_entry_id").empty());
    EXPECT_NE(entries[0].at("_entry_id"), entries[1].at("_entry_id"));

    redis.command({"SET", "plain", "x"});
    EXPECT_THROW(xrange_all(redis, "plain"), std::runtime_error);
}

TEST(TestConnection, ConnectFailureThrows) {
    int port;
    {
        RedisServer server;
        port = server.port();
        server.stop();
    }
    EXPECT_THROW(connect_within_200ms("127.0.0.1", port), std::runtime_error);
}

TEST(TestConnection, CommandAfterServerDiesThrows) {
    RedisServer server;
    TestConnection redis(server.host(), server.port());
    EXPECT_EQ(redis.command({"PING"}).str, "PONG");
    server.kill_hard();
    // Either the write (EPIPE, not SIGPIPE) or the read (EOF/reset) must fail.
    EXPECT_THROW(
        {
            redis.command({"PING"});
            redis.command({"PING"});
        },
        std::runtime_error);
}

TEST(RedisServer, StopStartKeepsPortAndAnswersAgain) {
    RedisServer server;
    const int port = server.port();
    const pid_t first_pid = server.pid();
    {
        TestConnection redis(server.host(), port);
        redis.command({"SET", "k", "v"});
    }
    server.stop();
    EXPECT_FALSE(server.running());
    EXPECT_THROW(connect_within_200ms(server.host(), port), std::runtime_error);

    server.start();
    EXPECT_TRUE(server.running());
    EXPECT_EQ(server.port(), port);
    EXPECT_NE(server.pid(), first_pid);
    TestConnection redis(server.host(), port);
    EXPECT_EQ(redis.command({"PING"}).str, "PONG");
    EXPECT_EQ(redis.command({"GET", "k"}).type, Type::Nil);  // no persistence configured
    EXPECT_THROW(server.start(), std::logic_error);

    server.kill_hard();
    EXPECT_FALSE(server.running());
    server.start();
    EXPECT_EQ(TestConnection(server.host(), port).command({"PING"}).str, "PONG");
    EXPECT_NE(server.log().find("Ready to accept connections"), std::string::npos);
}

TEST(RedisServer, StartFailsWithLogWhenPortIsTaken) {
    RedisServer server;
    server.stop();
    // Squat on the server's port with a listener that never answers.
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(server.port()));
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << strerror(errno);
    ASSERT_EQ(listen(fd, 16), 0);
    try {
        server.start();
        ADD_FAILURE() << "expected std::runtime_error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("Address already in use"), std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(server.running());
    close(fd);
    server.start();
    EXPECT_EQ(TestConnection(server.host(), server.port()).command({"PING"}).str, "PONG");
}

TEST(RedisServer, DestructorStopsServerAndRemovesDir) {
    pid_t pid;
    std::string dir;
    {
        RedisServer server;
        pid = server.pid();
        dir = server.dir();
    }
    EXPECT_FALSE(std::filesystem::exists(dir));
    EXPECT_NE(kill(pid, 0), 0);  // reaped, so the pid is gone (unless reused, which is unlikely)
}

TEST(ChildProcess, WaitExitReturnsExitCode) {
    ChildProcess child("/bin/sh", {"-c", "exit 3"});
    EXPECT_EQ(child.wait_exit(5s), std::optional<int>(3));
    EXPECT_FALSE(child.running());
    EXPECT_EQ(child.terminate(), 3);  // already reaped: no signal, same status
}

TEST(ChildProcess, TerminateSleepReturns143Quickly) {
    ChildProcess child("/bin/sleep", {"30"});
    EXPECT_TRUE(child.running());
    EXPECT_FALSE(child.wait_exit(50ms).has_value());
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(child.terminate(), 128 + SIGTERM);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(ChildProcess, TerminateEscalatesToSigkill) {
    ChildProcess child("/bin/sh", {"-c", "trap '' TERM; echo ready; while :; do sleep 1; done"});
    ASSERT_TRUE(wait_until([&] { return child.output().find("ready") != std::string::npos; }, 5s));
    EXPECT_EQ(child.terminate(200ms), 128 + SIGKILL);
}

TEST(ChildProcess, MissingBinaryThrows) {
    EXPECT_THROW(ChildProcess("/nonexistent/binary", {}), std::runtime_error);
}

TEST(ChildProcess, EnvironmentAndOutput) {
    setenv("EXPIRY_SUPPORT_INHERITED", "from-parent", 1);
    setenv("EXPIRY_SUPPORT_OVERRIDDEN", "old", 1);
    const std::string log = "/tmp/expiry-support-self-test-" + std::to_string(getpid()) + ".log";
    std::filesystem::remove(log);
    {
        ChildProcess child("/bin/sh",
                           {"-c", "echo out=$EXPIRY_SUPPORT_INHERITED,$EXPIRY_SUPPORT_OVERRIDDEN,"
                                  "$EXPIRY_SUPPORT_NEW; echo err >&2; read x; echo read=$x"},
                           {{"EXPIRY_SUPPORT_OVERRIDDEN", "new"}, {"EXPIRY_SUPPORT_NEW", "added"}}, log);
        ASSERT_EQ(child.wait_exit(5s), std::optional<int>(0));
        EXPECT_EQ(child.output(), "out=from-parent,new,added\nerr\nread=\n");
    }
    EXPECT_TRUE(std::filesystem::exists(log));  // caller-owned log is kept
    {
        ChildProcess again("/bin/sh", {"-c", "echo second"}, {}, log);
        ASSERT_EQ(again.wait_exit(5s), std::optional<int>(0));
        EXPECT_EQ(again.output(), "out=from-parent,new,added\nerr\nread=\nsecond\n");  // appended
    }
    std::filesystem::remove(log);

    std::string temp_log;
    {
        ChildProcess child("/bin/echo", {"hi"});
        temp_log = child.log_path();
        ASSERT_EQ(child.wait_exit(5s), std::optional<int>(0));
        EXPECT_EQ(child.output(), "hi\n");
    }
    EXPECT_FALSE(std::filesystem::exists(temp_log));  // owned temp log is deleted
}

TEST(ChildProcess, DestructorKillsRunningChild) {
    pid_t pid;
    {
        ChildProcess child("/bin/sleep", {"30"});
        pid = child.pid();
    }
    EXPECT_NE(kill(pid, 0), 0);
}

}  // namespace
}  // namespace expiry::test
