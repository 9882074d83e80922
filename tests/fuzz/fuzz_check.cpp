// Invariant failure reporting and the UTF-8 oracle; see fuzz_check.h.
#include "fuzz_check.h"

#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "base/text_escape.h"

namespace expiry::fuzz {

void invariant_failed(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  if (!detail.empty()) {
    const std::string shown = escape_text(detail.substr(0, 2000));
    std::fprintf(stderr, "  value: %s\n", shown.c_str());
  }
  std::fflush(stderr);
  std::abort();
}

bool tolerate_known_finding(std::string_view /*id*/) {
  static const bool strict = [] {
    const char* v = std::getenv("EXPIRY_FUZZ_STRICT");
    return v != nullptr && std::string_view(v) == "1";
  }();
  return !strict;
}

bool json_accepts_utf8(std::string_view s) {
  try {
    (void)nlohmann::json(std::string(s)).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {  // 316: invalid UTF-8 byte
    return false;
  }
}

}  // namespace expiry::fuzz
