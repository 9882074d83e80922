// See routed_client.h.
#include "io/sync/routed_client.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "base/errors.h"
#include "functions/bucket_plan.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "io/sync/sentinel_discovery.h"
#include "redis/handshake_refusal.h"
#include "redis/hash_slot.h"
#include "redis/redis_error.h"
#include "redis/resend_policy.h"

namespace expiry {
namespace {

constexpr size_t kSingleWindow = 512;  // commands in flight per round trip on one Redis
// Through Sentinel, how long a command waits for the sentinels to name a master it can reach
// after its first try failed (a crashed master is replaced after down-after-milliseconds and the
// election, about 3.5 s with 2 s of down-after; the default is 30 s).
constexpr std::chrono::seconds kFailoverWait{40};
constexpr std::chrono::milliseconds kFailoverPoll{200};

bool is_readonly(const Reply& r) { return classify(r) == RedisErrorKind::ReadOnly; }

}  // namespace

RoutedClient::RoutedClient(const RedisEndpoint& endpoint) : endpoint_(endpoint) {
  if (endpoint.sentinel.enabled()) {
    // A failover in progress, or a master not yet reachable, is waited out (bounded).
    reconnect_to_master("cannot reach the master through the sentinels");
  } else {
    single_ = std::make_unique<SyncConnection>(endpoint);
  }
  // The first command: a server that wants a password (or another) refuses the connection here.
  const Reply info = single_->command({"INFO", "cluster"});
  if (is_auth_refusal(classify(info)) && classify(info) != RedisErrorKind::NoPermission) {
    throw AuthError(handshake_refusal_message(single_->endpoint().redacted(), info));
  }
  if (info.failed() && classify(info) != RedisErrorKind::NoPermission) expect_ok(info, "INFO cluster");
  if (!info.failed() && info.str.find("cluster_enabled:1") != std::string::npos) {
    single_.reset();
    cluster_ = std::make_unique<ClusterClient>(endpoint);
  }
}

RoutedClient::~RoutedClient() = default;

int RoutedClient::agree_buckets(const std::string& ns, int configured) {
  const std::string key = KeyLayout(ns).buckets_key();
  const int slot = key_hash_slot(key);
  const auto stored = [&]() -> std::optional<std::string> {
    const Reply r = command({"GET", key}, slot);
    expect_ok(r, "GET " + key);
    if (r.type == Reply::Type::Nil) return std::nullopt;
    return r.str;
  };
  std::string error;
  auto plan = plan_buckets(stored(), configured, cluster(), ns, &error);
  if (!plan) throw ConfigError(error);
  if (plan->store) {
    expect_ok(command({"SET", key, std::to_string(plan->buckets), "NX"}, slot), "SET " + key);
    plan = plan_buckets(stored(), configured, cluster(), ns, &error);  // the key decides
    if (!plan) throw ConfigError(error);
  }
  return plan->buckets;
}

void RoutedClient::reconnect_to_master(const std::string& why) {
  single_.reset();
  const auto deadline = std::chrono::steady_clock::now() + kFailoverWait;
  while (true) {
    try {
      single_ = std::make_unique<SyncConnection>(endpoint_);
      return;
    } catch (const ConfigError&) {
      throw;  // an unknown master name, refused credentials, TLS that does not fit: no retry cures it
    } catch (const Error& e) {
      if (std::chrono::steady_clock::now() >= deadline) {
        throw IoError(why + "; no master could be reached through the sentinels within " +
                      std::to_string(kFailoverWait.count()) + " s: " + e.what());
      }
    }
    std::this_thread::sleep_for(kFailoverPoll);  // polling the sentinels, bounded by the deadline
  }
}

template <class Send>
Reply RoutedClient::on_master(const std::vector<std::string>& argv, Send send) {
  if (!endpoint_.sentinel.enabled()) return send(*single_);
  std::string why;
  try {
    if (!single_) reconnect_to_master("the previous command lost the master");
    Reply r = send(*single_);
    if (!is_readonly(r)) return r;
    why = single_->endpoint().host + ":" + std::to_string(single_->endpoint().port) + " is no longer the master (" +
          r.str + ")";
  } catch (const IoError& e) {
    if (!resend_is_safe(argv)) {
      single_.reset();  // the next command finds the master again
      throw;
    }
    why = e.what();
  }
  reconnect_to_master(why);
  return send(*single_);
}

Reply RoutedClient::command(const std::vector<std::string>& argv, int slot) {
  if (cluster_) return cluster_->command(argv, slot);
  return on_master(argv, [&](SyncConnection& c) { return c.command(argv); });
}

Reply RoutedClient::fcall(const std::vector<std::string>& argv, int slot) {
  return fcall(argv, slot, SyncConnection::expiry_library());
}

Reply RoutedClient::fcall(const std::vector<std::string>& argv, int slot,
                          const SyncConnection::FunctionLibrary& library) {
  if (cluster_) return cluster_->fcall(argv, slot, library);
  return on_master(argv, [&](SyncConnection& c) { return c.fcall(argv, library); });
}

std::vector<Reply> RoutedClient::batch(const std::vector<ClusterClient::Routed>& commands,
                                       const SyncConnection::FunctionLibrary* library) {
  if (cluster_) return library ? cluster_->batch(commands, *library) : cluster_->batch(commands);
  if (!endpoint_.sentinel.enabled()) return single_batch(commands, library);
  // Through Sentinel: a batch of safe commands is resent whole after a lost connection, and the
  // commands a demoted master refused (READONLY: they did not run) are resent to the new one.
  std::vector<Reply> out;
  try {
    if (!single_) reconnect_to_master("the previous command lost the master");
    out = single_batch(commands, library);
  } catch (const IoError& e) {
    const bool safe = std::all_of(commands.begin(), commands.end(),
                                  [](const ClusterClient::Routed& c) { return resend_is_safe(c.argv); });
    if (!safe) {
      single_.reset();
      throw;
    }
    reconnect_to_master(e.what());
    return single_batch(commands, library);
  }
  std::vector<ClusterClient::Routed> refused;
  std::vector<size_t> where;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!is_readonly(out[i])) continue;
    refused.push_back(commands[i]);
    where.push_back(i);
  }
  if (refused.empty()) return out;
  reconnect_to_master(single_->endpoint().host + ":" + std::to_string(single_->endpoint().port) +
                      " is no longer the master (READONLY)");
  std::vector<Reply> again = single_batch(refused, library);
  for (size_t i = 0; i < where.size(); ++i) out[where[i]] = std::move(again[i]);
  return out;
}

std::vector<Reply> RoutedClient::single_batch(const std::vector<ClusterClient::Routed>& commands,
                                              const SyncConnection::FunctionLibrary* library) {
  std::vector<Reply> out;
  out.reserve(commands.size());
  for (size_t start = 0; start < commands.size(); start += kSingleWindow) {
    const size_t end = std::min(commands.size(), start + kSingleWindow);
    for (size_t i = start; i < end; ++i) single_->append(commands[i].argv);
    for (size_t i = start; i < end; ++i) out.push_back(single_->read_reply());
  }
  if (library == nullptr) return out;
  bool loaded = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!is_function_missing(out[i])) continue;
    if (!loaded) single_->load_library(*library);
    loaded = true;
    out[i] = single_->command(commands[i].argv);
  }
  return out;
}

void RoutedClient::load_library_everywhere(const SyncConnection::FunctionLibrary& library) {
  if (cluster_) {
    cluster_->load_library_everywhere(library);
  } else {
    single().load_library(library);
  }
}

long long RoutedClient::wait_replicas(int replicas, std::chrono::milliseconds timeout) {
  if (cluster_) return cluster_->wait_replicas(replicas, timeout);
  const Reply r = expect_ok(single().command({"WAIT", std::to_string(replicas), std::to_string(timeout.count())}),
                            "WAIT");
  if (r.type != Reply::Type::Integer) throw ReplyError("WAIT: unexpected reply " + r.describe());
  return r.integer;
}

std::vector<NodeAddress> RoutedClient::primaries() {
  if (cluster_) return cluster_->primaries();
  return {NodeAddress{single().endpoint().host, single().endpoint().port}};
}

Reply RoutedClient::command_on(const NodeAddress& node, const std::vector<std::string>& argv) {
  if (cluster_) return cluster_->command_on(node, argv);
  return command(argv, 0);
}

bool RoutedClient::through_sentinel() const { return endpoint_.sentinel.enabled(); }

std::optional<int> RoutedClient::sentinel_healthy_replicas() {
  if (!endpoint_.sentinel.enabled()) return std::nullopt;
  return SentinelDiscovery(endpoint_).healthy_replicas();
}

void RoutedClient::rediscover_master(const std::string& why) {
  if (!endpoint_.sentinel.enabled()) return;
  reconnect_to_master(why);
}

SyncConnection& RoutedClient::single() {
  if (!single_ && !cluster_ && endpoint_.sentinel.enabled()) reconnect_to_master("the previous command lost the master");
  if (!single_) throw Error("internal: the single-Redis connection of a cluster client was asked for");
  return *single_;
}

}  // namespace expiry
