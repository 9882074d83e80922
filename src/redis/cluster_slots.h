// The slot map of a Redis Cluster (CLUSTER SLOTS) and its redirections (MOVED, ASK). Pure:
// both the blocking client and the relay's topology use it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/reply.h"

namespace expiry {

struct NodeAddress {
  std::string host;
  int port = 0;

  std::string to_string() const;  // "host:port" ("[v6]:port" for IPv6)
  bool operator==(const NodeAddress& o) const { return host == o.host && port == o.port; }
  bool operator!=(const NodeAddress& o) const { return !(*this == o); }
  bool operator<(const NodeAddress& o) const { return host != o.host ? host < o.host : port < o.port; }
};

// "host:port" (or "[v6]:port"), as in MOVED and ASK; nullopt if malformed.
std::optional<NodeAddress> parse_node_address(std::string_view text);

struct SlotRange {
  int first = 0;
  int last = 0;
  NodeAddress primary;
  std::vector<NodeAddress> replicas;
};

class SlotMap {
 public:
  // Decodes a CLUSTER SLOTS reply. A node listed with an empty or "?" host is reached at
  // `asked_host` (the address of the node that answered). Returns nullopt and sets `error`
  // for a reply that is not a slot map.
  static std::optional<SlotMap> from_cluster_slots(const Reply& reply, const std::string& asked_host,
                                                    std::string* error);

  // The primary serving `slot`, or nullptr if no node serves it.
  const NodeAddress* primary_of(int slot) const;
  // Every primary, sorted, once each.
  std::vector<NodeAddress> primaries() const;
  // The replicas of `primary`, as listed for its first range.
  std::vector<NodeAddress> replicas_of(const NodeAddress& primary) const;
  // True when every one of the 16384 slots has a primary.
  bool complete() const;
  const std::vector<SlotRange>& ranges() const { return ranges_; }

 private:
  std::vector<SlotRange> ranges_;  // sorted by first slot
};

// A MOVED or ASK error reply, parsed ("MOVED 3999 127.0.0.1:6381").
struct Redirect {
  enum class Kind { Moved, Ask };
  Kind kind = Kind::Moved;
  int slot = 0;
  NodeAddress to;
};

// The redirection an error text asks for (without the leading '-'), or nullopt.
std::optional<Redirect> parse_redirect(std::string_view error_text);

}  // namespace expiry
