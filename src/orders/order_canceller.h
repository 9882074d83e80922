// The order-timeout canceller's handler: for each fired timeout task, atomically move the order
// from pending to cancelled (orders_v1 order_cancel), leaving paid and cancelled orders alone.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "consumer/entry_handler.h"
#include "functions/stream_entry.h"
#include "io/function_caller.h"
#include "orders/order_keys.h"
#include "orders/orders_library.h"
#include "service/metrics.h"

namespace expiry {

struct CancellerStats {
  uint64_t processed = 0;       // entries settled (any outcome but retry)
  uint64_t cancelled = 0;
  uint64_t skipped_paid = 0;
  uint64_t already_cancelled = 0;
  uint64_t missing = 0;         // no such order
  uint64_t failed = 0;          // handler errors (task retried with backoff, dead-lettered after max_deliveries)
};

// The order a task refers to: the payload's "order_id" when the payload is a JSON object with
// that string field, else the task id without its "order:" prefix. Empty when neither applies
// (a poison entry).
std::string order_id_of(const StreamEntry& entry);
// The key of that order (order_keys.h), or empty for a poison entry.
std::string order_key_of(const StreamEntry& entry, const OrderKeyScheme& scheme = {});

// A Consumer handler (consumer/consumer.h): it has no connection of its own, and runs
// order_cancel through the entry's node's orders_v1 (the consumer loads orders_library_source()
// there).
class OrderCanceller {
 public:
  explicit OrderCanceller(OrderKeyScheme scheme = {});
  OrderCanceller(const OrderCanceller&) = delete;
  OrderCanceller& operator=(const OrderCanceller&) = delete;

  // Through `orders` (orders_v1 on the connection to the node of the entry's bucket).
  void handle_on(FunctionCaller& orders, const StreamEntry& entry, EntryDone done);
  const CancellerStats& stats() const { return stats_; }

 private:
  OrderKeyScheme scheme_;
  CancellerStats stats_;
};

// The canceller's metrics table (its own counters and the consumer's), read at scrape time.
// `ready`: both connections (every worker, on a cluster) are up and the group exists.
void register_canceller_metrics(Metrics& metrics, const CancellerStats& stats, const ConsumerStats& consumer,
                                std::function<bool()> ready);

}  // namespace expiry
