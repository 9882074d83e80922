// The routing decisions of the blocking cluster client (io/sync/cluster_client.h), kept pure so
// that they are unit-tested: what to do with the reply of a routed command, and how a batch of
// commands splits by node. Redirections are parsed by parse_redirect (cluster_slots.h).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <vector>

#include "redis/cluster_slots.h"
#include "redis/reply.h"

namespace expiry {

enum class ClusterStep {
  Done,            // the reply is the answer (success, or an error the caller must see)
  FollowMoved,     // MOVED: the slot lives elsewhere; refresh the map, resend to `redirect->to`
  FollowAsk,       // ASK: send ASKING + the command to `redirect->to` once; the map stays
  Retry,           // TRYAGAIN, LOADING, BUSY: wait a little, resend to the slot's owner
  RefreshAndRetry, // CLUSTERDOWN, MASTERDOWN, READONLY, a lost connection: wait, refresh, resend
};

struct ClusterVerdict {
  ClusterStep step = ClusterStep::Done;
  std::optional<Redirect> redirect;  // FollowMoved and FollowAsk only
};

// The step a reply asks for. A MOVED or ASK whose address cannot be parsed is Done (returned to
// the caller as it is). Errors of the expiry library (e.g. its "migrating" refusal) are Done:
// the caller decides about them.
ClusterVerdict cluster_verdict(const Reply& reply);

// A batch of commands split by the primary that serves each one's slot.
struct NodeGroups {
  std::map<NodeAddress, std::vector<size_t>> by_node;  // indexes into the input, ascending
  std::vector<size_t> unrouted;                         // slot out of range, or no primary for it
};
NodeGroups group_by_node(const std::vector<int>& slots, const SlotMap& map);

}  // namespace expiry
