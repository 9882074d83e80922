// See query_string.h.
#include "api/query_string.h"

#include "base/percent_encoding.h"

namespace expiry {

std::optional<std::multimap<std::string, std::string>> query_pairs(const std::string& query) {
  std::multimap<std::string, std::string> out;
  size_t pos = 0;
  while (pos < query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string::npos) end = query.size();
    const std::string part = query.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    auto key = percent_decode(part.substr(0, eq));
    auto value = percent_decode(eq == std::string::npos ? std::string() : part.substr(eq + 1));
    if (!key || !value) return std::nullopt;
    out.emplace(std::move(*key), std::move(*value));
  }
  return out;
}

}  // namespace expiry
