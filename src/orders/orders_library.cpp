// See orders_library.h.
#include "orders/orders_library.h"

#include "generated/orders_lua.h"  // generated: kOrdersLuaSource

namespace expiry {

const std::string& orders_library_source() {
  static const std::string source(kOrdersLuaSource);
  return source;
}

}  // namespace expiry
