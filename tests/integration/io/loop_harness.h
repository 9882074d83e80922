// Test harness of the in-process async tier: runs an EventLoop until a condition holds, with a
// watchdog timer that stops the loop (and fails the test) past a generous deadline, plus a
// log capture so tests can wait on what a component reports.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include "io/event_loop.h"
#include "io/redis_connection.h"
#include "support/redis_server.h"

namespace expiry::test {

inline constexpr std::chrono::milliseconds kLoopDeadline{30000};

class LoopHarness {
 public:
  LoopHarness()
      : poll_(loop, [this] { poll(); }),
        watchdog_(loop, [this] {
          timed_out_ = true;
          loop.stop();
        }) {}

  // Runs the loop until pred() holds (checked every millisecond) or `deadline` passes; returns
  // pred(). A miss is a test failure, reported with `what`.
  bool run_until(const std::function<bool()>& pred, const std::string& what,
                 std::chrono::milliseconds deadline = kLoopDeadline) {
    if (pred()) return true;
    pred_ = pred;
    timed_out_ = false;
    watchdog_.arm(deadline);
    poll_.arm(std::chrono::milliseconds(1));
    loop.run();
    watchdog_.cancel();
    poll_.cancel();
    pred_ = nullptr;
    const bool held = pred();
    EXPECT_TRUE(held) << "the loop ran " << deadline.count() << " ms without: " << what;
    return held;
  }

  EventLoop loop;

 private:
  void poll() {
    if (pred_ && pred_()) {
      loop.stop();
      return;
    }
    poll_.arm(std::chrono::milliseconds(1));
  }

  std::function<bool()> pred_;
  bool timed_out_ = false;
  Timer poll_;
  Timer watchdog_;
};

// Copies every log line of the default logger while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(out_)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = spdlog::default_logger()->sinks();
    for (auto it = sinks.begin(); it != sinks.end(); ++it) {
      if (*it == sink_) {
        sinks.erase(it);
        break;
      }
    }
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  bool contains(const std::string& text) const { return out_.str().find(text) != std::string::npos; }
  size_t count(const std::string& text) const {
    const std::string all = out_.str();
    size_t n = 0;
    for (size_t at = all.find(text); at != std::string::npos; at = all.find(text, at + text.size())) ++n;
    return n;
  }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

inline RedisConnection::Options connection_options(int port, const std::string& role) {
  RedisConnection::Options o;
  o.endpoint.host = "127.0.0.1";
  o.endpoint.port = port;
  o.role = role;
  o.client_name = "io-test-" + role;
  o.connect_timeout = std::chrono::milliseconds(2000);
  o.watchdog_interval = std::chrono::milliseconds(100);
  o.watchdog_timeout = std::chrono::milliseconds(3000);
  o.backoff.initial = std::chrono::milliseconds(20);
  o.backoff.max = std::chrono::milliseconds(200);
  return o;
}

// Counts the calls of one command callback and keeps the last reply.
struct CallCounter {
  int calls = 0;
  Reply last;
  RedisConnection::ReplyCallback callback() {
    return [this](const Reply& r) {
      ++calls;
      last = r;
    };
  }
};

}  // namespace expiry::test
