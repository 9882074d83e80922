// See redis_pinger.h.
#include "bench/redis_pinger.h"

#include <algorithm>
#include <chrono>

#include "base/errors.h"
#include "io/sync/sync_connection.h"

namespace expiry::bench {

RedisPinger::RedisPinger(const RedisEndpoint& redis, std::chrono::microseconds period)
    : redis_(redis), period_(period) {
  thread_ = std::thread([this] { run(); });
}

RedisPinger::~RedisPinger() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

RedisPinger::Result RedisPinger::finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (!error_.empty()) throw Error("redis pinger: " + error_);
  Result r;
  r.over_5ms = static_cast<size_t>(std::count_if(rtt_ms_.begin(), rtt_ms_.end(), [](double v) { return v > 5.0; }));
  r.rtt = summarize_lateness(std::move(rtt_ms_));
  return r;
}

void RedisPinger::run() {
  try {
    SyncConnection conn(redis_);
    rtt_ms_.reserve(64 * 1024);
    auto next = std::chrono::steady_clock::now();
    while (!stop_) {
      const auto sent = std::chrono::steady_clock::now();
      const Reply r = conn.command({"PING"});
      if (r.failed()) throw Error("PING: " + r.describe());
      rtt_ms_.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent).count());
      next = std::max(next + period_, std::chrono::steady_clock::now());
      std::this_thread::sleep_until(next);
    }
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

}  // namespace expiry::bench
