// See sentinel_reply.h.
#include "redis/sentinel_reply.h"

#include <vector>

#include "base/integers.h"

namespace expiry {
namespace {

std::optional<NodeAddress> address_of(std::string_view host, std::string_view port_text) {
  auto port = parse_int64(port_text);
  if (host.empty() || !port || *port < 1 || *port > 65535) return std::nullopt;
  return NodeAddress{std::string(host), static_cast<int>(*port)};
}

// The words of `message` split at single spaces (empty words kept, so doubled spaces fail).
std::vector<std::string_view> split_words(std::string_view message) {
  std::vector<std::string_view> words;
  size_t start = 0;
  while (start <= message.size()) {
    const size_t space = message.find(' ', start);
    words.push_back(message.substr(start, space == std::string_view::npos ? message.npos : space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return words;
}

}  // namespace

MasterAddressAnswer decode_master_address(const Reply& reply) {
  MasterAddressAnswer answer;
  if (reply.type == Reply::Type::Nil) {
    answer.unknown = true;
    return answer;
  }
  if (reply.type == Reply::Type::Error || reply.type == Reply::Type::IoError) {
    answer.error = reply.str;
    return answer;
  }
  if (reply.type == Reply::Type::Array && reply.elements.size() == 2 &&
      reply.elements[0].type == Reply::Type::String && reply.elements[1].type == Reply::Type::String) {
    answer.address = address_of(reply.elements[0].str, reply.elements[1].str);
  }
  if (!answer.address) answer.error = "malformed reply to SENTINEL GET-MASTER-ADDR-BY-NAME";
  return answer;
}

namespace {

// The field/value pairs of one instance in a SENTINEL MASTER / REPLICAS reply; false when `r` is
// not a flat array of strings of even length.
bool instance_fields(const Reply& r, std::vector<std::pair<std::string_view, std::string_view>>* out) {
  if (r.type != Reply::Type::Array || r.elements.size() % 2 != 0) return false;
  for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    const Reply& k = r.elements[i];
    const Reply& v = r.elements[i + 1];
    if ((k.type != Reply::Type::String && k.type != Reply::Type::Status) ||
        (v.type != Reply::Type::String && v.type != Reply::Type::Status)) {
      return false;
    }
    out->emplace_back(k.str, v.str);
  }
  return true;
}

std::string_view field(const std::vector<std::pair<std::string_view, std::string_view>>& fields,
                       std::string_view name) {
  for (const auto& [k, v] : fields) {
    if (k == name) return v;
  }
  return {};
}

// True if the comma-separated `flags` holds `flag`.
bool has_flag(std::string_view flags, std::string_view flag) {
  size_t start = 0;
  while (start <= flags.size()) {
    const size_t comma = flags.find(',', start);
    const auto word = flags.substr(start, comma == std::string_view::npos ? flags.npos : comma - start);
    if (word == flag) return true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return false;
}

}  // namespace

MasterState decode_master_state(const Reply& reply) {
  MasterState state;
  if (reply.type == Reply::Type::Error || reply.type == Reply::Type::IoError) {
    state.unknown = reply.str.find("No such master") != std::string::npos;
    state.error = reply.str;
    return state;
  }
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  const std::string_view flags = instance_fields(reply, &fields) ? field(fields, "flags") : std::string_view{};
  state.address = address_of(field(fields, "ip"), field(fields, "port"));
  if (!state.address || flags.empty()) {
    state.address.reset();
    state.error = "malformed reply to SENTINEL MASTER";
    return state;
  }
  if (auto epoch = parse_int64(field(fields, "config-epoch"))) state.config_epoch = *epoch;
  state.failover_in_progress = has_flag(flags, "failover_in_progress");
  state.down = has_flag(flags, "s_down") || has_flag(flags, "o_down");
  return state;
}

std::optional<int> count_healthy_replicas(const Reply& reply) {
  if (reply.type != Reply::Type::Array) return std::nullopt;
  int healthy = 0;
  for (const Reply& replica : reply.elements) {
    std::vector<std::pair<std::string_view, std::string_view>> fields;
    if (!instance_fields(replica, &fields)) return std::nullopt;
    const std::string_view flags = field(fields, "flags");
    if (has_flag(flags, "s_down") || has_flag(flags, "o_down") || has_flag(flags, "disconnected")) continue;
    if (field(fields, "master-link-status") != "ok") continue;
    ++healthy;
  }
  return healthy;
}

std::string role_of(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.empty()) return "";
  const Reply& first = reply.elements[0];
  if (first.type != Reply::Type::String && first.type != Reply::Type::Status) return "";
  return first.str;
}

std::optional<InstanceEvent> parse_instance_event(std::string_view message) {
  const std::vector<std::string_view> words = split_words(message);
  if ((words.size() != 4 && words.size() != 8) || words[0].empty() || words[1].empty()) return std::nullopt;
  if (words.size() == 8 && words[4] != "@") return std::nullopt;
  auto address = address_of(words[2], words[3]);
  if (!address) return std::nullopt;
  return InstanceEvent{std::string(words[0]), std::string(words[1]), *address};
}

std::optional<MasterSwitch> parse_switch_master(std::string_view message) {
  const std::vector<std::string_view> words = split_words(message);
  if (words.size() != 5 || words[0].empty()) return std::nullopt;
  auto from = address_of(words[1], words[2]);
  auto to = address_of(words[3], words[4]);
  if (!from || !to) return std::nullopt;
  return MasterSwitch{std::string(words[0]), *from, *to};
}

}  // namespace expiry
