// Redis's own responsiveness during a run: a thread that PINGs on its own connection every 10 ms
// (or `period`) and records each round trip. When the relay's tasks are late while the PINGs are slow too,
// Redis (or the machine under it) stalled, not the relay.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/lateness_stats.h"
#include "config/redis_url.h"

namespace expiry::bench {

class RedisPinger {
 public:
  // Connects its own connection (throws IoError) and starts pinging.
  explicit RedisPinger(const RedisEndpoint& redis, std::chrono::microseconds period = std::chrono::milliseconds(10));
  ~RedisPinger();
  RedisPinger(const RedisPinger&) = delete;
  RedisPinger& operator=(const RedisPinger&) = delete;

  // Stops the thread; percentiles of the round trips in ms, and how many took over 5 ms.
  struct Result {
    LatenessSummary rtt;
    size_t over_5ms = 0;
  };
  Result finish();

 private:
  void run();

  RedisEndpoint redis_;
  std::chrono::microseconds period_;
  std::atomic<bool> stop_{false};
  std::vector<double> rtt_ms_;  // written by the thread until joined
  std::string error_;           // written by the thread until joined
  std::thread thread_;          // last: starts after the members above exist
};

}  // namespace expiry::bench
