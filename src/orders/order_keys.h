// The names of an order's keys, shared by order-sim (which creates orders and schedules their
// timeouts) and order-canceller (which cancels them). Pure.
#pragma once

#include <string>
#include <string_view>

namespace expiry {

// Where order keys live: on one Redis "order:<id>"; on a cluster "order:{b}:<id>", where b is the
// bucket of the order's timeout task, so that the order shares the slot of the bucket stream the
// timeout is forwarded to and the canceller cancels it on the node it reads the timeout from.
struct OrderKeyScheme {
  bool cluster = false;
  int buckets = 1;  // the namespace's bucket count (used on a cluster)
};

// The id of order `order_id`'s timeout task: "order:<id>".
std::string order_task_id(std::string_view order_id);
// The key of order `order_id`: "order:<id>", or on a cluster "order:{b}:<id>" with
// b = bucket_of_task(order_task_id(order_id), scheme.buckets) (producer/task_placement.h).
std::string order_key(std::string_view order_id, const OrderKeyScheme& scheme);

}  // namespace expiry
