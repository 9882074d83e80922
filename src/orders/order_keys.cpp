// See order_keys.h.
#include "orders/order_keys.h"

#include "producer/task_placement.h"

namespace expiry {

std::string order_task_id(std::string_view order_id) { return "order:" + std::string(order_id); }

std::string order_key(std::string_view order_id, const OrderKeyScheme& scheme) {
  if (!scheme.cluster) return "order:" + std::string(order_id);
  const int bucket = bucket_of_task(order_task_id(order_id), scheme.buckets);
  return "order:{" + std::to_string(bucket) + "}:" + std::string(order_id);
}

}  // namespace expiry
