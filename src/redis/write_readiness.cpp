// See write_readiness.h.
#include "redis/write_readiness.h"

#include "redis/redis_error.h"

namespace expiry {

void WriteReadiness::on_success() {
  refused_ = false;
  failures_ = 0;
}

void WriteReadiness::on_failure(const Reply& reply, const std::string& what) {
  switch (classify(reply)) {
    case RedisErrorKind::None:
    case RedisErrorKind::Io:
    case RedisErrorKind::Loading:
    case RedisErrorKind::Busy:
    case RedisErrorKind::Moved:
    case RedisErrorKind::Ask:
    case RedisErrorKind::TryAgain:
    case RedisErrorKind::ClusterDown:
    case RedisErrorKind::Migrating:
      return;
    case RedisErrorKind::ReadOnly:
    case RedisErrorKind::MasterDown:
    case RedisErrorKind::NoReplicas:
    case RedisErrorKind::OutOfMemory:
      refused_ = true;
      reason_ = "the node refuses writes (" + what + ": " + reply.str + ")";
      return;
    default:
      ++failures_;
      reason_ = what + " failed " + std::to_string(failures_) + " time" + (failures_ == 1 ? "" : "s") +
                " in a row, last: " + reply.str;
      return;
  }
}

void WriteReadiness::on_role(const std::string& role) {
  if (role == "master") {
    refused_ = false;  // a write that is still refused says so again
    return;
  }
  refused_ = true;
  reason_ = "the node answers ROLE \"" + role + "\", not master: it cannot take writes";
}

bool WriteReadiness::ready(std::string& why) const {
  if (refused_ || failures_ >= kFailuresInARow) {
    why = reason_;
    return false;
  }
  return true;
}

}  // namespace expiry
