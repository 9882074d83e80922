// See cluster_routing.h.
#include "redis/cluster_routing.h"

#include "redis/hash_slot.h"
#include "redis/redis_error.h"

namespace expiry {

ClusterVerdict cluster_verdict(const Reply& reply) {
  ClusterVerdict v;
  switch (classify(reply)) {
    case RedisErrorKind::Moved:
    case RedisErrorKind::Ask:
      v.redirect = parse_redirect(reply.str);
      if (v.redirect) {
        v.step = v.redirect->kind == Redirect::Kind::Moved ? ClusterStep::FollowMoved : ClusterStep::FollowAsk;
      }
      return v;
    case RedisErrorKind::TryAgain:
    case RedisErrorKind::Loading:
    case RedisErrorKind::Busy:
      v.step = ClusterStep::Retry;
      return v;
    case RedisErrorKind::Io:
    case RedisErrorKind::ClusterDown:
    case RedisErrorKind::MasterDown:
    case RedisErrorKind::ReadOnly:
      v.step = ClusterStep::RefreshAndRetry;
      return v;
    default:
      return v;
  }
}

NodeGroups group_by_node(const std::vector<int>& slots, const SlotMap& map) {
  NodeGroups out;
  for (size_t i = 0; i < slots.size(); ++i) {
    const NodeAddress* owner =
        slots[i] >= 0 && slots[i] < kClusterSlots ? map.primary_of(slots[i]) : nullptr;
    if (owner) {
      out.by_node[*owner].push_back(i);
    } else {
      out.unrouted.push_back(i);
    }
  }
  return out;
}

}  // namespace expiry
