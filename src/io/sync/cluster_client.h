// The blocking Redis Cluster router: one SyncConnection per node (opened on first use), the slot
// map from CLUSTER SLOTS, and the redirections (MOVED, ASK), waits (TRYAGAIN, CLUSTERDOWN) and
// reconnects that a routed command may need. Used by the command-line tools and the tests.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "io/sync/sync_connection.h"
#include "redis/cluster_slots.h"
#include "redis/reply.h"

namespace expiry {

// Contracts:
// - Every node is reached with the seed's credentials (user, password); db is always 0.
// - A routed command goes to the primary of its slot and follows, until it gets an answer or
//   Options::retry_deadline has passed since it was first sent (cluster_routing.h says which
//   reply asks for what):
//   MOVED: refresh the map, resend to the node named; ASK: ASKING + the command on the node named,
//   once, the map unchanged; TRYAGAIN, LOADING, BUSY: back off, resend to the owner;
//   CLUSTERDOWN, MASTERDOWN, READONLY, a lost or refused connection: back off, refresh, resend.
//   Past the deadline the last error reply is returned (a lost connection throws IoError).
// - A command whose connection broke after it was sent is sent again: it may run twice. Send only
//   commands for which that is harmless (the expiry functions are idempotent per task id).
// - Other error replies (WRONGTYPE, CROSSSLOT, the expiry library's own errors ...) are returned.
// - Not thread-safe: one client per thread.
class ClusterClient {
 public:
  struct Options {
    SyncConnection::Options connection;                     // for every node
    std::chrono::milliseconds retry_deadline{10000};        // per command (per batch: for its retries)
    BackoffPolicy backoff{std::chrono::milliseconds(10), std::chrono::milliseconds(200), 0.5};
    size_t window = 256;                                    // batch: commands in flight per node
  };

  // A command and the slot it is routed by (key_hash_slot of its key, or bucket_slot(b)).
  struct Routed {
    int slot = 0;
    std::vector<std::string> argv;
  };

  // Reads the slot map from `seed` (refresh()). Throws IoError if the seed cannot be reached,
  // ReplyError if it is not a cluster node (or refuses CLUSTER SLOTS).
  explicit ClusterClient(const RedisEndpoint& seed);
  ClusterClient(const RedisEndpoint& seed, Options options);
  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;
  ClusterClient(ClusterClient&&) = delete;
  ClusterClient& operator=(ClusterClient&&) = delete;

  // True when the server has cluster mode on (INFO cluster: cluster_enabled:1). Throws
  // ReplyError if INFO is refused, IoError as SyncConnection does.
  static bool is_cluster(SyncConnection& connection);

  // Replaces the slot map with CLUSTER SLOTS of the first node that answers, trying the known
  // primaries, the seed, then the known replicas; a complete map wins over an incomplete one.
  // Throws IoError if no node answers, ReplyError if the seed refuses and no node answers.
  void refresh();
  const SlotMap& slot_map() const { return map_; }

  // The command (FCALL) routed by `slot`, as in the contracts above.
  Reply command(const std::vector<std::string>& argv, int slot);
  // FCALL of a function of `library` (default expiry_v1), routed by `slot`: where the library is
  // missing it is loaded (FUNCTION LOAD REPLACE) and the call resent. Throws ReplyError if a
  // load is refused.
  Reply fcall(const std::vector<std::string>& argv, int slot);
  Reply fcall(const std::vector<std::string>& argv, int slot, const SyncConnection::FunctionLibrary& library);

  // Sends `commands` pipelined, in windows of Options::window per node, to every node at once,
  // and returns their replies in input order. Commands whose reply asks for a redirect or a
  // retry (and, with `library`, FCALLs whose library is missing) are then resent one by one as
  // command() does, after the others, sharing one retry deadline; a command that still cannot
  // be delivered gets a Reply of Type::IoError instead of an exception. Commands to the same
  // node run in input order unless one of them is resent.
  std::vector<Reply> batch(const std::vector<Routed>& commands);
  std::vector<Reply> batch(const std::vector<Routed>& commands, const SyncConnection::FunctionLibrary& library);

  // FUNCTION LOAD REPLACE of `library` (default expiry_v1) on every primary of a fresh map.
  // Throws ReplyError if a node refuses, IoError if one cannot be reached.
  void load_library_everywhere();
  void load_library_everywhere(const SyncConnection::FunctionLibrary& library);

  // WAIT `replicas` `timeout` on every node written to since the last call (all at once) and
  // returns the smallest count acknowledged. "Written to": a routed command was answered there
  // (other than by a redirect or retry error), or its connection broke after it was sent. A node
  // whose connection was lost since, or that refuses WAIT (it became a replica), counts 0: what
  // it acknowledged may be gone. Nothing written: `replicas`.
  long long wait_replicas(int replicas, std::chrono::milliseconds timeout);

  // The primaries of the current map (refreshed first if it is empty), for per-node commands.
  std::vector<NodeAddress> primaries();
  // One command on one node, not routed and not retried (INFO, SCAN, CLUSTER ...). A lost
  // connection throws IoError and is reopened by the next call.
  Reply command_on(const NodeAddress& node, const std::vector<std::string>& argv);

 private:
  struct Node {
    std::unique_ptr<SyncConnection> connection;  // null until used, and after it broke
    bool written = false;       // a command went out on `connection` since the last WAIT
    bool written_lost = false;  // a connection that was written to broke since the last WAIT
  };
  using Clock = std::chrono::steady_clock;

  SyncConnection& connection(const NodeAddress& address);
  void drop(const NodeAddress& address);
  bool refresh_quietly();
  Reply execute(const std::vector<std::string>& argv, int slot, const SyncConnection::FunctionLibrary* library,
                Clock::time_point deadline);
  std::vector<Reply> run_batch(const std::vector<Routed>& commands, const SyncConnection::FunctionLibrary* library);
  void pause(uint32_t attempt);

  RedisEndpoint seed_;
  Options options_;
  SlotMap map_;
  std::map<NodeAddress, Node> nodes_;
};

}  // namespace expiry
