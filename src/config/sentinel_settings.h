// How a program finds its Redis through Redis Sentinel: the sentinels to ask, the name of the
// monitored master, and the sentinels' own password. Pure data and parsing; io/sync/
// sentinel_discovery asks the sentinels.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/cluster_slots.h"

namespace expiry {

struct SentinelSettings {
  std::vector<NodeAddress> sentinels;  // empty: no Sentinel, the URL's host and port are the Redis
  std::string master;                  // the name the sentinels monitor the master under
  std::string password;                // AUTH on the sentinels (not the data password); empty: none

  bool enabled() const { return !sentinels.empty(); }
  // "mymaster via 127.0.0.1:26379,127.0.0.1:26380", for logs (no password).
  std::string describe() const;
  bool operator==(const SentinelSettings& o) const;
  bool operator!=(const SentinelSettings& o) const { return !(*this == o); }
};

// Parses "host:port[,host:port...]" (IPv6 hosts bracketed); throws ConfigError naming the item
// that is not an address, an empty item, or a sentinel listed twice.
std::vector<NodeAddress> parse_sentinel_list(std::string_view text);

// What is inconsistent in `s`: sentinels without a master name or a name without sentinels, a
// password without sentinels, a master name with spaces or control characters.
std::optional<std::string> sentinel_settings_error(const SentinelSettings& s);

}  // namespace expiry
