// See sentinel_discovery.h.
#include "io/sync/sentinel_discovery.h"

#include <utility>

#include "io/sync/sync_connection.h"
#include "protocol/redis_error.h"
#include "protocol/sentinel_reply.h"

namespace expiry {

SentinelDiscovery::SentinelDiscovery(const RedisEndpoint& endpoint, std::chrono::milliseconds timeout)
    : endpoint_(endpoint), timeout_(timeout), order_(endpoint.sentinel.sentinels) {
  if (order_.empty()) throw std::logic_error("SentinelDiscovery without sentinels");
}

RedisEndpoint SentinelDiscovery::sentinel_endpoint(size_t index) const {
  RedisEndpoint e;
  e.host = order_.at(index).host;
  e.port = order_.at(index).port;
  e.password = endpoint_.sentinel.password;
  e.tls = endpoint_.tls;
  return e;
}

std::optional<NodeAddress> SentinelDiscovery::named_master() {
  const SyncConnection::Options options{timeout_, timeout_};
  for (size_t i = 0; i < order_.size(); ++i) {
    try {
      SyncConnection conn(sentinel_endpoint(i), options);
      auto answer = decode_master_address(conn.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", endpoint_.sentinel.master}));
      if (answer.address) return answer.address;
    } catch (const Error&) {
      // the next sentinel may answer
    }
  }
  return std::nullopt;
}

RedisEndpoint SentinelDiscovery::find_master() {
  const SyncConnection::Options options{timeout_, timeout_};
  const std::string& name = endpoint_.sentinel.master;
  std::string failures;
  int unknown = 0;  // sentinels that answered nil
  int named = 0;    // sentinels that named an address
  const auto note = [&](const NodeAddress& where, const std::string& why) {
    failures += (failures.empty() ? "" : "; ") + where.to_string() + ": " + why;
  };
  for (size_t i = 0; i < order_.size(); ++i) {
    const NodeAddress sentinel = order_[i];
    MasterAddressAnswer answer;
    try {
      SyncConnection conn(sentinel_endpoint(i), options);
      answer = decode_master_address(conn.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", name}));
    } catch (const Error& e) {
      note(sentinel, e.what());
      continue;
    }
    if (answer.unknown) {
      ++unknown;
      note(sentinel, "knows no master named \"" + name + "\"");
      continue;
    }
    if (!answer.address) {
      note(sentinel, answer.error);
      continue;
    }
    ++named;
    RedisEndpoint master = endpoint_;
    master.host = answer.address->host;
    master.port = answer.address->port;
    try {
      RedisEndpoint plain = master;
      plain.sentinel = SentinelSettings{};
      SyncConnection node(plain, options);
      const Reply role = node.command({"ROLE"});
      const bool refused = role.type == Reply::Type::Error && classify(role) == RedisErrorKind::NoPermission;
      if (!refused && role_of(role) != "master") {
        note(sentinel, "names " + answer.address->to_string() + ", which answers ROLE " +
                           (role.type == Reply::Type::Error ? role.str : "\"" + role_of(role) + "\"") +
                           ", not master");
        continue;
      }
    } catch (const Error& e) {
      note(sentinel, "names " + answer.address->to_string() + ", which cannot be reached: " + e.what());
      continue;
    }
    if (i != 0) {
      order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(i));
      order_.insert(order_.begin(), sentinel);
    }
    return master;
  }
  if (unknown > 0 && named == 0) {
    // The sentinels that answered said nil; the others may be down, but none named a master.
    throw UnknownMasterError("no sentinel knows a master named \"" + name + "\" (" + failures + ")");
  }
  throw IoError("cannot find the master \"" + name + "\" through the sentinels (" + failures + ")");
}

}  // namespace expiry
