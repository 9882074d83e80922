// Shared helpers of the relay integration tests: start expiry-relay processes against a
// RedisServer, wait until they are subscribed, schedule tasks, and read the stream.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "functions/stream_entry.h"
#include "harness/child_process.h"
#include "redis/redis_time.h"
#include "support/redis_client.h"
#include "support/redis_server.h"
#include "support/wait.h"

namespace expiry::test {

using namespace std::chrono_literals;
using Entries = std::vector<std::map<std::string, std::string>>;

inline std::unique_ptr<ChildProcess> start_relay(const RedisServer& server, const std::string& instance,
                                                 std::vector<std::string> extra_args = {}) {
  std::vector<std::string> args = {"--redis-url", server.url(), "--instance", instance,
                                   "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200",
                                   "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "1000",
                                   "--health-probe-interval-ms", "200"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  return std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                        server.dir() + "/relay-" + instance + ".log");
}

// True once the relay `instance` has loaded the library, created the group and subscribed
// (its health channel has a subscriber).
inline bool relay_ready(SyncConnection& redis, const std::string& instance, const std::string& ns = "expiry") {
  auto numsub = redis.command({"PUBSUB", "NUMSUB", KeyLayout(ns).health_channel(instance)});
  if (numsub.elements.size() != 2 || numsub.elements[1].integer != 1) return false;
  auto groups = redis.command({"XINFO", "GROUPS", KeyLayout(ns).default_stream()});
  return !groups.failed() && !groups.elements.empty();
}

inline void wait_relay_ready(SyncConnection& redis, const std::string& instance, ChildProcess& relay) {
  ASSERT_TRUE(wait_until([&] { return relay_ready(redis, instance); }, 10s))
      << "relay " << instance << " not ready; output:\n"
      << relay.output();
}

// A loopback port that was free a moment ago.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

struct HttpResponse {
  int status = 0;  // 0: no connection
  std::string body;
};

// A minimal HTTP/1.0 GET on 127.0.0.1 (2 s receive timeout).
inline HttpResponse http_get(int port, const std::string& path) {
  HttpResponse out;
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return out;
  }
  const std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string raw;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) raw.append(buf, static_cast<size_t>(n));
  ::close(fd);
  if (raw.rfind("HTTP/1.", 0) == 0 && raw.size() > 12) out.status = std::stoi(raw.substr(9, 3));
  auto body = raw.find("\r\n\r\n");
  if (body != std::string::npos) out.body = raw.substr(body + 4);
  return out;
}

// The value of the series `series` (name plus labels, exactly as rendered) in exposition text.
inline double metric_value(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

inline long long redis_now_ms(SyncConnection& redis) {
  const Reply t = redis.command({"TIME"});
  const auto ms = time_reply_ms(t);
  if (!ms) throw std::runtime_error("TIME: unexpected reply " + t.describe());
  return *ms;
}

struct Task {
  std::string id;
  long long delay_ms;
  std::string payload;
};

// Schedules `tasks` with pipelined FCALLs (loading the library first) and returns their due times.
inline std::map<std::string, long long> schedule_all(SyncConnection& redis, const std::vector<Task>& tasks,
                                                     const std::string& ns = "expiry") {
  KeyLayout keys(ns);
  redis.command(load_library_argv());
  std::map<std::string, long long> due;
  const size_t kWindow = 1000;
  for (size_t start = 0; start < tasks.size(); start += kWindow) {
    std::vector<std::vector<std::string>> cmds;
    for (size_t i = start; i < std::min(tasks.size(), start + kWindow); ++i) {
      cmds.push_back(schedule_argv(keys, tasks[i].id, ScheduleMode::Delay, tasks[i].delay_ms, tasks[i].payload));
    }
    std::vector<Reply> replies;
    pipeline(redis, cmds, &replies);
    for (size_t i = 0; i < replies.size(); ++i) {
      EXPECT_FALSE(replies[i].failed()) << replies[i].describe();
      if (!replies[i].failed()) due[tasks[start + i].id] = replies[i].elements[0].integer;
    }
  }
  return due;
}

inline long long xlen(SyncConnection& redis, const std::string& stream = "expiry:stream") {
  return integer(redis, {"XLEN", stream});
}

inline long long zcard(SyncConnection& redis, const std::string& ns = "expiry") {
  return integer(redis, {"ZCARD", KeyLayout(ns).schedule_key()});
}

// Asserts each id in `expected` is in `entries` exactly once with its payload, and nothing else is.
inline void expect_exactly_once(const Entries& entries, const std::map<std::string, std::string>& expected) {
  std::map<std::string, int> seen;
  for (const auto& e : entries) {
    const auto& id = e.at(entry_field::kId);
    ++seen[id];
    auto it = expected.find(id);
    if (it == expected.end()) {
      ADD_FAILURE() << "unexpected task in stream: " << id;
      continue;
    }
    EXPECT_EQ(e.at(entry_field::kPayload), it->second) << "payload of " << id;
  }
  size_t duplicated = 0;
  size_t lost = 0;
  for (const auto& [id, payload] : expected) {
    auto it = seen.find(id);
    if (it == seen.end()) {
      ++lost;
    } else if (it->second > 1) {
      ++duplicated;
    }
  }
  EXPECT_EQ(lost, 0u) << "tasks lost";
  EXPECT_EQ(duplicated, 0u) << "tasks duplicated";
  EXPECT_EQ(entries.size(), expected.size());
}

}  // namespace expiry::test
