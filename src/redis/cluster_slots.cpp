// See cluster_slots.h. CLUSTER SLOTS reply (Redis 7): an array of
// [first, last, [host, port, id, ...] (primary), [host, port, id, ...] (replicas)...].
#include "redis/cluster_slots.h"

#include <algorithm>

#include "base/integers.h"
#include "redis/hash_slot.h"

namespace expiry {

std::string NodeAddress::to_string() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::optional<NodeAddress> parse_node_address(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  // Redis 7 may append "@cport" to node addresses in some replies; MOVED/ASK do not.
  std::string_view port_text = text.substr(colon + 1);
  if (size_t at = port_text.find('@'); at != std::string_view::npos) port_text = port_text.substr(0, at);
  auto port = parse_int64(port_text);
  if (!port || *port < 1 || *port > 65535) return std::nullopt;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) return std::nullopt;
  return NodeAddress{std::string(host), static_cast<int>(*port)};
}

namespace {

std::optional<NodeAddress> node_of(const Reply& r, const std::string& asked_host) {
  if (r.type != Reply::Type::Array || r.elements.size() < 2) return std::nullopt;
  const Reply& host = r.elements[0];
  const Reply& port = r.elements[1];
  if (host.type != Reply::Type::String || port.type != Reply::Type::Integer) return std::nullopt;
  if (port.integer < 1 || port.integer > 65535) return std::nullopt;
  NodeAddress node{host.str, static_cast<int>(port.integer)};
  if (node.host.empty() || node.host == "?") node.host = asked_host;
  return node;
}

}  // namespace

std::optional<SlotMap> SlotMap::from_cluster_slots(const Reply& reply, const std::string& asked_host,
                                                   std::string* error) {
  auto bad = [&](const std::string& why) -> std::optional<SlotMap> {
    if (error) *error = "unexpected CLUSTER SLOTS reply: " + why;
    return std::nullopt;
  };
  if (reply.type != Reply::Type::Array) return bad(reply.describe());
  SlotMap map;
  for (const Reply& range : reply.elements) {
    if (range.type != Reply::Type::Array || range.elements.size() < 3) return bad("a range without a primary");
    const Reply& first = range.elements[0];
    const Reply& last = range.elements[1];
    if (first.type != Reply::Type::Integer || last.type != Reply::Type::Integer || first.integer < 0 ||
        last.integer >= kClusterSlots || first.integer > last.integer) {
      return bad("a malformed slot range");
    }
    SlotRange out;
    out.first = static_cast<int>(first.integer);
    out.last = static_cast<int>(last.integer);
    auto primary = node_of(range.elements[2], asked_host);
    if (!primary) return bad("a malformed node in range " + std::to_string(out.first));
    out.primary = *primary;
    for (size_t i = 3; i < range.elements.size(); ++i) {
      if (auto replica = node_of(range.elements[i], asked_host)) out.replicas.push_back(*replica);
    }
    map.ranges_.push_back(std::move(out));
  }
  std::sort(map.ranges_.begin(), map.ranges_.end(),
            [](const SlotRange& a, const SlotRange& b) { return a.first < b.first; });
  for (size_t i = 1; i < map.ranges_.size(); ++i) {
    if (map.ranges_[i].first <= map.ranges_[i - 1].last) return bad("overlapping slot ranges");
  }
  return map;
}

const NodeAddress* SlotMap::primary_of(int slot) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), slot,
                             [](int s, const SlotRange& r) { return s < r.first; });
  if (it == ranges_.begin()) return nullptr;
  --it;
  return slot <= it->last ? &it->primary : nullptr;
}

std::vector<NodeAddress> SlotMap::primaries() const {
  std::vector<NodeAddress> out;
  for (const auto& r : ranges_) out.push_back(r.primary);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<NodeAddress> SlotMap::replicas_of(const NodeAddress& primary) const {
  for (const auto& r : ranges_) {
    if (r.primary == primary) return r.replicas;
  }
  return {};
}

bool SlotMap::complete() const {
  int next = 0;
  for (const auto& r : ranges_) {
    if (r.first != next) return false;
    next = r.last + 1;
  }
  return next == kClusterSlots;
}

std::optional<Redirect> parse_redirect(std::string_view text) {
  Redirect r;
  if (text.substr(0, 6) == "MOVED ") {
    r.kind = Redirect::Kind::Moved;
    text.remove_prefix(6);
  } else if (text.substr(0, 4) == "ASK ") {
    r.kind = Redirect::Kind::Ask;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto slot = parse_int64(text.substr(0, space));
  if (!slot || *slot < 0 || *slot >= kClusterSlots) return std::nullopt;
  r.slot = static_cast<int>(*slot);
  auto to = parse_node_address(text.substr(space + 1));
  if (!to) return std::nullopt;
  r.to = *to;
  return r;
}

}  // namespace expiry
