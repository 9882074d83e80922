// See callback_barrier.h.
#include "io/callback_barrier.h"

#include <spdlog/spdlog.h>

namespace expiry {

void report_callback_exception(std::string_view who, const char* what) noexcept {
  try {
    if (what != nullptr) {
      spdlog::error("{} threw, ignored: {}", who, what);
    } else {
      spdlog::error("{} threw, ignored", who);
    }
  } catch (...) {
    // Logging failed too: nothing more can be done from a C callback.
  }
}

}  // namespace expiry
