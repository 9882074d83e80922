// RedisCluster: a private, throwaway Redis Cluster (primaries + replicas of redis_server_binary(),
// support/server_binaries.h) for the cluster tests, with the failovers and slot migrations those
// tests drive.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "harness/child_process.h"
#include "io/sync/sync_connection.h"
#include "redis/cluster_slots.h"
#include "redis/reply.h"

namespace expiry::test {

// Runs `primaries` primaries and as many replicas (one per primary) on 127.0.0.1.
//
// Contracts:
// - Every node has its own dir under one temp dir (mkdtemp under /tmp) holding redis.conf,
//   nodes.conf, redis.log and redis.stdout.log; the destructor removes it recursively.
// - Ports are picked at random in 10000..22767, so that the port and its cluster bus
//   (port + 10000) both lie below 32768, outside the kernel's ephemeral range, and below 55536.
//   A node that cannot bind gets a new port (up to 5 attempts).
// - Config: cluster-enabled yes, cluster-node-timeout from Options, notify-keyspace-events Ex
//   (unless Options say otherwise), no persistence (save "", appendonly no), replicas synced
//   without the diskless-sync delay and pinged every second (so that CLUSTER SLOTS lists them
//   soon); extra_config_lines come last and win.
// - The constructor returns once `redis-cli --cluster create ... --cluster-replicas 1` has run and
//   wait_cluster_ok() holds; it throws std::runtime_error (with the nodes' log tails) otherwise.
// - Node indexes are stable: node i is started on the same port and dir by restart(). The first
//   `primaries` nodes start as primaries; roles change with failovers (nodes() reads them live).
// - Only the pids this object started are ever signalled. The destructor stops every node.
// - Not thread-safe; every blocking wait has a deadline (Options::ready_deadline).
class RedisCluster {
public:
    struct Options {
        int primaries = 3;                                  // and one replica per primary
        std::chrono::milliseconds node_timeout{5000};       // cluster-node-timeout
        std::chrono::milliseconds ready_deadline{60000};    // bound of every wait of this class
        bool notify_expired = true;                         // notify-keyspace-events "Ex" (else "")
        std::vector<std::string> extra_config_lines;        // raw redis.conf lines, appended last
    };

    enum class Role { Primary, Replica, Down };

    struct Node {
        int index = -1;     // stable handle: position in nodes()
        std::string host;   // always 127.0.0.1
        int port = 0;
        pid_t pid = -1;     // current (or most recent) process
        std::string id;     // cluster node id (CLUSTER MYID), stable across restart()
        Role role = Role::Down;  // as the node says now (Down: not running or not answering)
    };

    RedisCluster();
    explicit RedisCluster(Options opts);
    ~RedisCluster();

    RedisCluster(const RedisCluster&) = delete;
    RedisCluster& operator=(const RedisCluster&) = delete;
    RedisCluster(RedisCluster&&) = delete;
    RedisCluster& operator=(RedisCluster&&) = delete;

    // Every node, with its role as it answers now (ROLE).
    std::vector<Node> nodes() const;
    const Node& node(int index) const;  // static fields only; role as last seen by nodes()
    // The running primaries that serve at least one slot, sorted by port.
    std::vector<Node> primaries() const;
    // The running replicas.
    std::vector<Node> replicas() const;

    // "redis://127.0.0.1:<port>" of a running primary.
    std::string seed_url() const;
    std::string url_of(const Node& node) const;

    // CLUSTER SLOTS of the first running node that answers it (throws if none does).
    SlotMap slot_map() const;
    // The primary serving `slot`, per slot_map().
    Node primary_for_slot(int slot) const;

    // A connection (tests' options: SIGPIPE ignored, 60 s reply timeout) to one node.
    std::unique_ptr<SyncConnection> connect(const Node& node) const;
    // One command on one node (no routing, no redirects followed).
    Reply command(const Node& node, const std::vector<std::string>& argv) const;

    // SIGKILL + reap of the node's own process. No-op if not running.
    void kill_hard(const Node& node);
    // Starts the node again on its port and dir (same nodes.conf, so the same id) and waits until
    // it answers PING; it rejoins the cluster by itself (use wait_cluster_ok() to wait for that).
    void restart(const Node& node);
    bool running(const Node& node) const;

    // CLUSTER FAILOVER on `replica`; returns once it is a primary and wait_cluster_ok() holds.
    // Throws std::runtime_error if that does not happen within ready_deadline.
    void manual_failover(const Node& replica);

    // Moves each slot of `slots` from its owner to `to` (a primary), one slot at a time:
    // begin_migration, migrate_keys until the slot is empty, finish_migration. Slots `to` already
    // owns are skipped. Returns once wait_cluster_ok() holds.
    void move_slots(const std::vector<int>& slots, const Node& to);
    // The steps of move_slots, for tests that act in between. begin_migration marks `slot`
    // IMPORTING on `to` and MIGRATING on its owner. migrate_keys MIGRATEs up to `max_keys` keys of
    // the slot from the owner to the target and returns how many it moved. finish_migration assigns
    // the slot to the target on the target, the former owner and every other primary (SETSLOT NODE).
    void begin_migration(int slot, const Node& to);
    int migrate_keys(int slot, int max_keys);
    void finish_migration(int slot);

    // Waits until every running node says cluster_state:ok, all of them report the same slot map
    // (primaries and replicas of every range) covering every slot, and every running replica
    // has master_link_status:up. Throws std::runtime_error (with what was last seen) otherwise.
    void wait_cluster_ok();

    std::string dir() const { return dir_; }
    // Contents of the node's redis.log.
    std::string log(const Node& node) const;

private:
    struct Process;
    struct Migration {
        int slot = -1;
        int from = -1;  // node index
        int to = -1;    // node index
    };

    void launch_all();
    void create_cluster();
    // One pass of the wait_cluster_ok() condition; `why` says what does not hold yet.
    bool cluster_ok(std::string* why) const;
    int owner_index(int slot) const;
    int index_of_port(int port) const;
    std::string failure_report(const std::string& what) const;

    Options opts_;
    std::string dir_;  // the temp dir holding one subdir per node
    std::vector<std::unique_ptr<Process>> procs_;  // index = node index
    mutable std::vector<Node> nodes_;               // static fields; role as last seen
    std::vector<Migration> migrations_;            // begun and not finished
};

const char* to_string(RedisCluster::Role role);

}  // namespace expiry::test
