// See sentinel_settings.h.
#include "config/sentinel_settings.h"

#include <algorithm>
#include <tuple>

#include "base/errors.h"

namespace expiry {

std::string SentinelSettings::describe() const {
  std::string text = master + " via ";
  for (size_t i = 0; i < sentinels.size(); ++i) text += (i == 0 ? "" : ",") + sentinels[i].to_string();
  return text;
}

bool SentinelSettings::operator==(const SentinelSettings& o) const {
  return std::tie(sentinels, master, password) == std::tie(o.sentinels, o.master, o.password);
}

std::vector<NodeAddress> parse_sentinel_list(std::string_view text) {
  std::vector<NodeAddress> list;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    if (item.empty()) throw ConfigError("sentinel list \"" + std::string(text) + "\" has an empty item (expected host:port[,host:port...])");
    auto address = parse_node_address(item);
    if (!address || item.find('@') != std::string_view::npos) {
      throw ConfigError("\"" + std::string(item) + "\" is not a sentinel address (expected host:port, port 1..65535)");
    }
    if (std::find(list.begin(), list.end(), *address) != list.end()) {
      throw ConfigError("sentinel " + address->to_string() + " is listed twice");
    }
    list.push_back(*address);
    if (comma == std::string_view::npos) return list;
    start = comma + 1;
  }
}

std::optional<std::string> sentinel_settings_error(const SentinelSettings& s) {
  if (!s.enabled()) {
    if (!s.master.empty()) return "sentinel_master is set but no sentinel is (set --sentinel HOST:PORT,...)";
    if (!s.password.empty()) return "a sentinel password is set but no sentinel is (set --sentinel HOST:PORT,...)";
    return std::nullopt;
  }
  if (s.master.empty()) return "--sentinel needs --sentinel-master, the name the sentinels monitor the master under";
  for (unsigned char c : s.master) {
    if (c <= ' ' || c == 0x7f) return "sentinel_master \"" + s.master + "\" must not contain spaces or control characters";
  }
  return std::nullopt;
}

}  // namespace expiry
