// See sentinel_discovery.h.
#include "io/sync/sentinel_discovery.h"

#include <thread>
#include <utility>

#include "io/sync/sync_connection.h"
#include "redis/redis_error.h"
#include "redis/sentinel_reply.h"

namespace expiry {
namespace {

// What one sentinel said, asked on its own thread.
struct SentinelAnswer {
  bool answered = false;  // it replied at all (an error reply included)
  bool refused = false;   // it refused the sentinel password, or wanted one
  MasterState state;
  std::string failure;  // why there is no state: a connection failure or a refusal
};

// A sentinel answers SENTINEL MASTER from memory, in microseconds: one that takes longer than
// this to answer is not waited for (a frozen one, or a listener that never answers), so that it
// delays every lookup by this much at most, not by the whole timeout.
constexpr std::chrono::milliseconds kSentinelReplyTimeout{500};

SentinelAnswer ask_sentinel(const RedisEndpoint& sentinel, const std::string& name, std::chrono::milliseconds timeout) {
  SentinelAnswer answer;
  try {
    SyncConnection conn(sentinel, SyncConnection::Options{timeout, std::min(timeout, kSentinelReplyTimeout)});
    const Reply reply = conn.command({"SENTINEL", "MASTER", name});
    answer.answered = true;
    if (reply.failed() && is_auth_refusal(classify(reply))) {
      answer.refused = true;
      answer.failure = reply.str + " (the sentinels' own password: sentinel_password_file)";
      return answer;
    }
    answer.state = decode_master_state(reply);
    if (!answer.state.address && !answer.state.unknown) answer.failure = answer.state.error;
  } catch (const AuthError& e) {
    answer.answered = true;
    answer.refused = true;
    answer.failure = std::string(e.what()) + " (the sentinels' own password: sentinel_password_file)";
  } catch (const std::exception& e) {
    answer.failure = e.what();
  }
  return answer;
}

}  // namespace

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

RedisEndpoint SentinelDiscovery::find_master() {
  const std::string& name = endpoint_.sentinel.master;
  // Every sentinel at once: the one running a failover may be any of them, and one that does
  // not answer must not delay the others' answers by its timeout each.
  std::vector<SentinelAnswer> answers(order_.size());
  {
    std::vector<std::thread> askers;
    for (size_t i = 0; i < order_.size(); ++i) {
      askers.emplace_back([this, i, &answers, &name] { answers[i] = ask_sentinel(sentinel_endpoint(i), name, timeout_); });
    }
    for (auto& t : askers) t.join();
  }

  std::string failures;
  const auto note = [&](const NodeAddress& where, const std::string& why) {
    failures += (failures.empty() ? "" : "; ") + where.to_string() + ": " + why;
  };
  int answered = 0, refused = 0, unknown = 0;
  std::optional<size_t> best;  // the answer naming an address with the highest config-epoch
  for (size_t i = 0; i < answers.size(); ++i) {
    const SentinelAnswer& a = answers[i];
    answered += a.answered ? 1 : 0;
    refused += a.refused ? 1 : 0;
    if (a.state.failover_in_progress) {
      throw FailoverInProgressError("sentinel " + order_[i].to_string() + " is failing master \"" + name +
                                    "\" over (from " + a.state.address->to_string() + "): waiting for the switch");
    }
    if (a.state.unknown) {
      ++unknown;
      note(order_[i], "knows no master named \"" + name + "\"");
    } else if (!a.state.address) {
      note(order_[i], a.failure);
    } else if (!best || a.state.config_epoch > answers[*best].state.config_epoch) {
      best = i;
    }
  }
  if (!best) {
    if (refused > 0 && refused == answered) {
      throw AuthError("the sentinels refuse the sentinel password (" + failures + ")");
    }
    if (unknown > 0) throw UnknownMasterError("no sentinel knows a master named \"" + name + "\" (" + failures + ")");
    throw IoError("cannot find the master \"" + name + "\" through the sentinels (" + failures + ")");
  }

  const NodeAddress sentinel = order_[*best];
  const NodeAddress named = *answers[*best].state.address;
  RedisEndpoint master = endpoint_;
  master.host = named.host;
  master.port = named.port;
  std::string not_master;  // the role the node answers, when it is not master
  try {
    RedisEndpoint plain = master;
    plain.sentinel = SentinelSettings{};
    SyncConnection node(plain, SyncConnection::Options{timeout_, timeout_});
    const Reply role = node.command({"ROLE"});
    const bool refused_role = role.type == Reply::Type::Error && classify(role) == RedisErrorKind::NoPermission;
    if (!refused_role && role_of(role) != "master") {
      not_master = role.type == Reply::Type::Error ? role.str : "\"" + role_of(role) + "\"";
    }
  } catch (const AuthError& e) {
    // The data node refuses the data credentials: every node of the group will.
    throw AuthError("the sentinels name " + named.to_string() + " as master \"" + name +
                    "\", which refuses the credentials: " + e.what());
  } catch (const Error& e) {
    throw IoError("cannot find the master \"" + name + "\" through the sentinels: " + sentinel.to_string() + " names " +
                  named.to_string() + ", which cannot be reached: " + e.what());
  }
  if (!not_master.empty()) {
    throw IoError("cannot find the master \"" + name + "\" through the sentinels: " + sentinel.to_string() +
                  " names " + named.to_string() + " (config epoch " + std::to_string(answers[*best].state.config_epoch) +
                  "), which answers ROLE " + not_master + ", not master");
  }
  if (*best != 0) {
    order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(*best));
    order_.insert(order_.begin(), sentinel);
  }
  return master;
}

std::optional<int> SentinelDiscovery::healthy_replicas() {
  try {
    SyncConnection conn(sentinel_endpoint(0), SyncConnection::Options{timeout_, timeout_});
    return count_healthy_replicas(conn.command({"SENTINEL", "REPLICAS", endpoint_.sentinel.master}));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace expiry
