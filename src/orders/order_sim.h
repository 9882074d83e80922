// order-sim: the order side of the demo. Creates orders at a steady rate, schedules each one's
// payment timeout through the relay protocol into the order timeouts' own stream, pays a share
// of them before the timeout (paying also cancels the timeout task), then checks every order's
// final state. On a Redis Cluster (told from the server) each order lives at
// order:{b}:<id> (order_keys.h) and its timeout goes to the bucket stream NS:{b}:stream of its
// task's bucket b, where order-canceller reads it; every call is routed by its key's slot. A stop request (SIGTERM/SIGINT) cuts the run short: no new orders, a bounded
// wait for the orders in flight, then the same checks on what could be checked.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/redis_url.h"
#include "orders/orders_library.h"

namespace expiry {

// Stop requests, written by order-sim's SIGTERM/SIGINT handler and read by run_order_sim between
// its steps. Lock-free atomics only, so the handler may write them.
struct StopRequest {
  std::atomic<int> first_signal{0};  // the signal number of the first request, 0 while none
  std::atomic<int> count{0};         // requests so far: 1 drains, 2 or more end the drain at once
};
static_assert(std::atomic<int>::is_always_lock_free, "StopRequest is written from a signal handler");

struct OrderSimConfig {
  RedisEndpoint redis;
  std::string ns = "expiry";
  int buckets = 0;                              // the `buckets` setting (0: NS:buckets, bucket_plan.h)
  std::string stream = kOrderTimeoutStream;     // the timeout tasks' own stream on one Redis (order-canceller
                                                // reads it); on a cluster the bucket streams are used
  double rate = 100;                            // orders per second
  std::chrono::milliseconds duration{20000};    // how long orders are created
  std::chrono::milliseconds timeout{3000};      // payment timeout of each order
  double paid_share = 0.5;                      // share of orders paid before the timeout
  std::chrono::milliseconds grace{3000};        // after the last due time, how long to wait for cancels
  std::chrono::milliseconds drain{5000};        // after a stop request, longest wait for orders in flight
  std::string run_id;                           // prefix of order ids (default: sim-<pid>-<unix time>)
  std::string webhook;                          // non-empty: each timeout carries webhook=NAME (expiry-webhook
                                                // delivers it to that endpoint instead of order-canceller)
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
  // Set when a stop request cut the run short:
  int stopped_by = 0;                // the signal (SIGTERM, SIGINT); 0: the run went to its end
  long long ran_ms = 0;              // from the start to the stop request
  long long drain_ms = 0;            // the longest wait allowed for the orders in flight
  uint64_t left_pending = 0;         // unpaid orders still pending whose due + grace had not passed
  bool cut_short() const { return stopped_by != 0; }
  long long percentile(double p) const;
  bool ok() const { return wrongly_cancelled == 0 && missed == 0; }
  std::string text() const;
  std::string json() const;
};

// Runs the simulation (blocking); throws Error on connection or protocol failures. `stop`
// (may be null) is polled at least every 50 ms: the first request stops the creation of
// orders and leaves at most config.drain for the payments and cancels in flight; a second one
// ends that wait at once. Either way the summary is returned, marked as cut short.
OrderSimSummary run_order_sim(const OrderSimConfig& config, const StopRequest* stop = nullptr);

}  // namespace expiry
