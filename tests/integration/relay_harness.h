// Shared helpers of the relay integration tests: start expiry-relay processes against a
// RedisServer, wait until they are subscribed, schedule tasks, and read the stream.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "function_library.h"
#include "key_layout.h"
#include "support/child_process.h"
#include "support/redis_server.h"
#include "support/sync_redis.h"
#include "support/wait.h"

namespace expiry::test {

using namespace std::chrono_literals;
using Entries = std::vector<std::map<std::string, std::string>>;

inline std::unique_ptr<ChildProcess> start_relay(const RedisServer& server, const std::string& instance,
                                                 std::vector<std::string> extra_args = {}) {
  std::vector<std::string> args = {"--redis-url", server.url(), "--instance", instance,
                                   "--reconnect-initial-ms", "20", "--reconnect-max-ms", "200",
                                   "--watchdog-interval-ms", "200", "--watchdog-timeout-ms", "1000"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  return std::make_unique<ChildProcess>(EXPIRY_RELAY_BIN, args, std::vector<std::pair<std::string, std::string>>{},
                                        server.dir() + "/relay-" + instance + ".log");
}

// True once the relay `instance` has loaded the library, created the group and subscribed
// (its health channel has a subscriber).
inline bool relay_ready(SyncRedis& redis, const std::string& instance, const std::string& ns = "expiry") {
  auto numsub = redis.command({"PUBSUB", "NUMSUB", KeyLayout(ns).health_channel(instance)});
  if (numsub.elements.size() != 2 || numsub.elements[1].integer != 1) return false;
  auto groups = redis.command({"XINFO", "GROUPS", KeyLayout(ns).default_stream()});
  return !groups.is_error() && !groups.elements.empty();
}

inline void wait_relay_ready(SyncRedis& redis, const std::string& instance, ChildProcess& relay) {
  ASSERT_TRUE(wait_until([&] { return relay_ready(redis, instance); }, 10s))
      << "relay " << instance << " not ready; output:\n"
      << relay.output();
}

inline long long redis_now_ms(SyncRedis& redis) {
  auto t = redis.command({"TIME"});
  return std::stoll(t.elements[0].str) * 1000 + std::stoll(t.elements[1].str) / 1000;
}

struct Task {
  std::string id;
  long long delay_ms;
  std::string payload;
};

// Schedules `tasks` with pipelined FCALLs (loading the library first) and returns their due times.
inline std::map<std::string, long long> schedule_all(SyncRedis& redis, const std::vector<Task>& tasks,
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
    std::vector<SyncRedis::Reply> replies;
    redis.pipeline(cmds, &replies);
    for (size_t i = 0; i < replies.size(); ++i) {
      EXPECT_FALSE(replies[i].is_error()) << replies[i].to_string();
      if (!replies[i].is_error()) due[tasks[start + i].id] = replies[i].elements[0].integer;
    }
  }
  return due;
}

inline long long xlen(SyncRedis& redis, const std::string& stream = "expiry:stream") {
  return redis.integer({"XLEN", stream});
}

inline long long zcard(SyncRedis& redis, const std::string& ns = "expiry") {
  return redis.integer({"ZCARD", KeyLayout(ns).schedule_key()});
}

// Asserts each id in `expected` is in `entries` exactly once with its payload, and nothing else is.
inline void expect_exactly_once(const Entries& entries, const std::map<std::string, std::string>& expected) {
  std::map<std::string, int> seen;
  for (const auto& e : entries) {
    const auto& id = e.at("id");
    ++seen[id];
    auto it = expected.find(id);
    if (it == expected.end()) {
      ADD_FAILURE() << "unexpected task in stream: " << id;
      continue;
    }
    EXPECT_EQ(e.at("payload"), it->second) << "payload of " << id;
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
