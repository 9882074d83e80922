// See info_text.h.
#include "redis/info_text.h"

namespace expiry {

std::string info_field(std::string_view info, std::string_view field) {
  size_t start = 0;
  while (start < info.size()) {
    size_t end = info.find('\n', start);
    if (end == std::string_view::npos) end = info.size();
    std::string_view line = info.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':') {
      return std::string(line.substr(field.size() + 1));
    }
    start = end + 1;
  }
  return "";
}

}  // namespace expiry
