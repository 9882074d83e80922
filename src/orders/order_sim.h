// order-sim: the order side of the demo. Creates orders at a steady rate, schedules each one's
// payment timeout through the relay protocol, pays a share of them before the timeout (paying
// also cancels the timeout task), then checks every order's final state.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "redis_url.h"

namespace expiry {

struct OrderSimConfig {
  RedisEndpoint redis;
  std::string ns = "expiry";
  double rate = 100;                            // orders per second
  std::chrono::milliseconds duration{20000};    // how long orders are created
  std::chrono::milliseconds timeout{3000};      // payment timeout of each order
  double paid_share = 0.5;                      // share of orders paid before the timeout
  std::chrono::milliseconds grace{3000};        // after the last due time, how long to wait for cancels
  std::string run_id;                           // prefix of order ids (default: sim-<pid>)
  uint32_t seed = 1;
};

struct OrderSimSummary {
  uint64_t created = 0;
  uint64_t paid = 0;                 // payments accepted before the timeout fired
  uint64_t paid_too_late = 0;        // payment refused: the order was already cancelled
  uint64_t cancelled = 0;            // cancelled by the timeout
  uint64_t wrongly_cancelled = 0;    // paid orders found cancelled: must be 0
  uint64_t missed = 0;               // unpaid orders still pending after due + grace: must be 0
  uint64_t tasks_left = 0;           // timeout tasks still in the schedule at the end
  std::vector<long long> lateness_ms;  // per cancelled order: cancelled_ms - due_ms
  long long percentile(double p) const;
  bool ok() const { return wrongly_cancelled == 0 && missed == 0; }
  std::string text() const;
  std::string json() const;
};

// Runs the simulation (blocking); throws Error on connection or protocol failures.
OrderSimSummary run_order_sim(const OrderSimConfig& config);

}  // namespace expiry
