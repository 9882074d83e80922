// Rate limit for log lines that outside data can trigger at will (one per expired key, per
// failed call): at most one line per interval, and the next line says how many were held back.
// Pure: the caller passes the time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "base/clock.h"

namespace expiry {

class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::milliseconds interval) : interval_(interval) {}

  // nullopt: drop this line (it is counted). Otherwise log it, with the number of lines dropped
  // since the last one logged.
  std::optional<uint64_t> allow(Clock::time_point now) {
    if (logged_once_ && now - last_logged_ < interval_) {
      ++suppressed_;
      return std::nullopt;
    }
    logged_once_ = true;
    last_logged_ = now;
    const uint64_t dropped = suppressed_;
    suppressed_ = 0;
    return dropped;
  }

 private:
  std::chrono::milliseconds interval_;
  Clock::time_point last_logged_{};
  bool logged_once_ = false;
  uint64_t suppressed_ = 0;  // lines dropped since the last one logged
};

}  // namespace expiry
