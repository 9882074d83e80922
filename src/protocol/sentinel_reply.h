// Decoding what Redis Sentinel answers and publishes: the master's address, a node's ROLE, and a
// +switch-master message. Pure functions, unit-tested without sockets.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/cluster_slots.h"
#include "protocol/reply.h"

namespace expiry {

// SENTINEL GET-MASTER-ADDR-BY-NAME: the address, or why there is none. A nil reply means the
// sentinel knows no master of that name (`unknown`); anything else that is not a two-element
// [host, port] array is `error` (an error reply's text, or "malformed reply").
struct MasterAddressAnswer {
  std::optional<NodeAddress> address;
  bool unknown = false;
  std::string error;
};
MasterAddressAnswer decode_master_address(const Reply& reply);

// ROLE's first element ("master", "slave", "sentinel"), or "" for anything else.
std::string role_of(const Reply& reply);

// A sentinel event about an instance ("+try-failover", "-failover-abort-...", ...):
// "<type> <name> <ip> <port>[ @ <master name> <master ip> <master port>]"; type is "master",
// "slave" or "sentinel".
struct InstanceEvent {
  std::string type;
  std::string name;
  NodeAddress address;
};
std::optional<InstanceEvent> parse_instance_event(std::string_view message);

// A +switch-master message: "<master name> <old ip> <old port> <new ip> <new port>".
struct MasterSwitch {
  std::string master;
  NodeAddress from;
  NodeAddress to;
};
std::optional<MasterSwitch> parse_switch_master(std::string_view message);

}  // namespace expiry
