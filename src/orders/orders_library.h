// What order-sim and order-canceller share: the orders_v1 function library (src/lua/orders.lua)
// and the stream the order timeouts go to (the order keys are in order_keys.h). Pure.
#pragma once

#include <string>

namespace expiry {

// The stream order timeouts go to: order-sim schedules each timeout with it as the task's own
// stream, and order-canceller reads it by default. The relay's default stream (NS:stream) holds
// the tasks of every other producer, which are not orders and not the canceller's to handle.
constexpr const char* kOrderTimeoutStream = "orders:timeouts";

// The source of orders_v1, for FUNCTION LOAD.
const std::string& orders_library_source();

}  // namespace expiry
