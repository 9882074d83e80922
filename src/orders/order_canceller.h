// The order-timeout canceller's handler: for each fired timeout task, atomically move the order
// from pending to cancelled (orders_v1 order_cancel), leaving paid and cancelled orders alone.
#pragma once

#include <cstdint>
#include <string>

#include "io/function_caller.h"
#include "io/metrics.h"
#include "consumer/stream_consumer.h"
#include "orders/orders_library.h"

namespace expiry {

struct CancellerStats {
  uint64_t processed = 0;       // entries settled (any outcome but retry)
  uint64_t cancelled = 0;
  uint64_t skipped_paid = 0;
  uint64_t already_cancelled = 0;
  uint64_t missing = 0;         // no such order
  uint64_t failed = 0;          // handler errors (entry retried, dead-lettered eventually)
};

// The order key a task refers to: "order:" + payload's "order_id" when the payload is a JSON
// object with that string field, else the task id itself if it starts with "order:".
// Empty when neither applies (a poison entry).
std::string order_key_of(const StreamEntry& entry);

class OrderCanceller {
 public:
  explicit OrderCanceller(RedisConnection& commands);
  OrderCanceller(const OrderCanceller&) = delete;
  OrderCanceller& operator=(const OrderCanceller&) = delete;

  void handle(const StreamEntry& entry, StreamConsumer::Done done);
  // Loads orders_v1 (call when the command connection becomes ready; failures are logged).
  void load_library();
  const CancellerStats& stats() const { return stats_; }

 private:
  FunctionCaller orders_;
  CancellerStats stats_;
};

// The canceller's metrics table (its own counters and the consumer's), read at scrape time.
void register_canceller_metrics(Metrics& metrics, const CancellerStats& stats, const StreamConsumer& consumer);

}  // namespace expiry
