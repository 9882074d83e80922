// Decoding what Redis Sentinel answers and publishes: the master's address, a node's ROLE, and a
// +switch-master message. Pure functions, unit-tested without sockets.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "redis/cluster_slots.h"
#include "redis/reply.h"

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

// SENTINEL MASTER <name>: what one sentinel holds about the master. The reply is a flat array of
// field/value pairs; `ip`, `port` and `flags` are required, `config-epoch` optional (0).
// `unknown`: the sentinel knows no master of that name ("ERR No such master with that name").
// `failover_in_progress`: this sentinel is running a failover of it right now (flag
// failover_in_progress; only the sentinel that runs it knows), so the address it gives may be
// about to change.
struct MasterState {
  std::optional<NodeAddress> address;
  long long config_epoch = 0;
  bool failover_in_progress = false;
  bool down = false;  // flagged s_down or o_down by this sentinel
  bool unknown = false;
  std::string error;  // an error reply's text, or "malformed reply ..."
};
MasterState decode_master_state(const Reply& reply);

// SENTINEL REPLICAS <name>: how many replicas this sentinel sees healthy (neither s_down,
// o_down nor disconnected, and master-link-status ok), or nullopt for an error or malformed reply.
std::optional<int> count_healthy_replicas(const Reply& reply);

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
