// RoutedClient: the blocking client of a namespace that may live on one Redis or on a Redis
// Cluster, for the command-line tools (expiry-ctl, order-sim). It finds out which from the server
// (INFO cluster: cluster_enabled:1) and agrees on the namespace's bucket count (NS:buckets, as
// functions/bucket_plan.h says); then every command is routed by a hash slot, which a single
// Redis ignores. One concept: "send this to whoever holds that slot".
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/redis_url.h"
#include "io/sync/cluster_client.h"
#include "io/sync/sync_connection.h"
#include "redis/cluster_slots.h"
#include "redis/reply.h"

namespace expiry {

// Contracts:
// - On one Redis every command goes to the one connection, in order; an I/O failure throws
//   IoError (SyncConnection's contract). On a cluster, ClusterClient's contracts hold
//   (redirects followed, a batch command that cannot be delivered gets a Reply of Type::IoError).
// - Through Sentinel (endpoint.sentinel): a command refused with READONLY (it did not run) is
//   sent again to the master the sentinels name next, once; after a lost connection only a
//   command that resend_is_safe (redis/resend_policy.h) is, and the IoError of any other
//   propagates (the next command finds the master again). Finding the new master waits for the
//   sentinels to name a reachable one for at most 40 s.
// - A user refused INFO (NOPERM) is taken to be on a single Redis, as the consumers do.
// - Not thread-safe.
class RoutedClient {
 public:
  // Connects to `endpoint` and asks it whether it is a cluster node (then reads the slot map).
  // Throws IoError / ReplyError as SyncConnection and ClusterClient do.
  explicit RoutedClient(const RedisEndpoint& endpoint);
  ~RoutedClient();
  RoutedClient(const RoutedClient&) = delete;
  RoutedClient& operator=(const RoutedClient&) = delete;

  bool cluster() const { return cluster_ != nullptr; }

  // The bucket count of namespace `ns`: NS:buckets reconciled with `configured` (0: not set) by
  // plan_buckets, written with SET NX when the plan says so and read back (another program may
  // have written first). Throws ConfigError with plan_buckets' message when the counts differ
  // or the key holds garbage, ReplyError when GET or SET is refused.
  int agree_buckets(const std::string& ns, int configured);

  // One command routed by `slot`.
  Reply command(const std::vector<std::string>& argv, int slot);
  // FCALL routed by `slot`; a missing library (default expiry_v1) is loaded and the call resent.
  Reply fcall(const std::vector<std::string>& argv, int slot);
  Reply fcall(const std::vector<std::string>& argv, int slot, const SyncConnection::FunctionLibrary& library);
  // The commands pipelined (per node on a cluster); replies in input order. With `library`,
  // FCALLs whose library is missing are resent once it is loaded (on one Redis: the library is
  // loaded before the batch when a first FCALL finds it missing).
  std::vector<Reply> batch(const std::vector<ClusterClient::Routed>& commands,
                           const SyncConnection::FunctionLibrary* library = nullptr);

  // FUNCTION LOAD REPLACE of `library` on the one Redis, or on every primary of a cluster.
  void load_library_everywhere(const SyncConnection::FunctionLibrary& library);

  // WAIT `replicas` `timeout`: on a cluster on every node written to since the last call, on
  // one Redis on the connection. Returns the smallest count of replicas that acknowledged.
  long long wait_replicas(int replicas, std::chrono::milliseconds timeout);

  // Through Sentinel: the replicas the sentinels see healthy (WAIT for them confirms a write
  // survives a failover); nullopt without Sentinel or when the sentinels cannot tell.
  bool through_sentinel() const;
  std::optional<int> sentinel_healthy_replicas();
  // Through Sentinel: drops the connection and connects to the master the sentinels name now,
  // waiting out a failover in progress (at most 40 s). No-op without Sentinel.
  void rediscover_master(const std::string& why);

  // The nodes holding the data: the primaries of a cluster, or the one Redis.
  std::vector<NodeAddress> primaries();
  // One command on one node of primaries() (not routed, not retried).
  Reply command_on(const NodeAddress& node, const std::vector<std::string>& argv);

  // The connection to the single Redis (only when !cluster()), for code that pipelines itself.
  SyncConnection& single();

 private:
  // Through Sentinel: drops the connection and connects to the master the sentinels name,
  // retrying within the failover wait; throws IoError (with `why`) when none is reachable.
  void reconnect_to_master(const std::string& why);
  // `send` on the single connection with the Sentinel retry of the contract above.
  template <class Send>
  Reply on_master(const std::vector<std::string>& argv, Send send);
  std::vector<Reply> single_batch(const std::vector<ClusterClient::Routed>& commands,
                                  const SyncConnection::FunctionLibrary* library);

  RedisEndpoint endpoint_;
  std::unique_ptr<SyncConnection> single_;
  std::unique_ptr<ClusterClient> cluster_;
};

}  // namespace expiry
