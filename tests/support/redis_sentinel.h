// SentinelGroup: a private, throwaway Redis Sentinel setup (a master, one replica and three
// sentinels of redis_server_binary(), support/server_binaries.h) for the sentinel tests, with the
// failovers they drive.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/child_process.h"
#include "io/sync/sync_connection.h"
#include "redis/reply.h"
#include "support/redis_server.h"

namespace expiry::test {

// Runs two data nodes (RedisServer; node 0 starts as the master, node 1 as its replica) and three
// sentinels monitoring them, all on 127.0.0.1 free ports.
//
// Contracts:
// - Data nodes: RedisServer's config (notify-keyspace-events Ex, no persistence) plus
//   repl-diskless-sync-delay 0; node 1 also `replicaof` node 0. With a data password both have
//   requirepass and masterauth. Sentinels send CONFIG REWRITE to the nodes they reconfigure, so a
//   node restarted by restart_node() starts with the role the sentinels last gave it.
// - Sentinels: `<redis_sentinel_binary()> <dir>/sentinel.conf --sentinel`, each with its own temp
//   dir (mkdtemp under /tmp) holding its private sentinel.conf (which the sentinel rewrites),
//   sentinel.log and sentinel.stdout.log. They monitor master_name() with quorum 2,
//   down-after-milliseconds 2000 and failover-timeout 10000 (plus auth-pass with a data
//   password; requirepass and sentinel-pass with a sentinel password: Redis 7.0 sentinels
//   would also use their requirepass towards each other, sentinel-pass says it). A sentinel that cannot
//   bind its port gets a new one (up to 5 attempts) at construction.
// - TLS mode (Options::tls set): both data nodes are TLS-only RedisServers with those options, and
//   the replica replicates over TLS (`tls-replication yes`). The sentinels listen on a TLS port
//   only (`port 0`, `tls-port`, the same certificate, key, CA and tls-auth-clients) and talk TLS
//   to the nodes and to each other (`tls-replication yes`). With auth_clients, the nodes' and
//   sentinels' outgoing links present the probe certificate (tls-client-cert-file/-key-file).
//   Every connection of this class (probes, connect_node, connect_sentinel) then verifies the
//   server with ca_cert_file and presents the probe certificate if there is one; data_url_of()
//   gives rediss:// URLs. TLS options RedisServer refuses throw std::invalid_argument.
// - The constructor returns only once the group is ready for a failover at once:
//   wait_replica_in_sync() holds (see there). It throws std::runtime_error (with the log tails
//   of every node and sentinel) otherwise.
// - Every blocking wait is bounded by Options::ready_deadline and throws std::runtime_error
//   (with what was last seen and the log tails) when it runs out.
// - Only the pids this object started are ever signalled. The destructor stops the sentinels,
//   then the nodes, and removes every temp dir.
// - Not thread-safe.
class SentinelGroup {
public:
    struct Options {
        std::string master_name = "mymaster";
        std::string data_password;      // non-empty: requirepass + masterauth, sentinel auth-pass
        std::string sentinel_password;  // non-empty: the sentinels' requirepass and sentinel-pass
        std::chrono::milliseconds ready_deadline{60000};  // bound of every wait of this class
        std::optional<RedisTlsOptions> tls;  // set: TLS mode (see above)
    };

    static constexpr int kNodes = 2;
    static constexpr int kSentinels = 3;

    SentinelGroup();
    explicit SentinelGroup(Options opts);
    ~SentinelGroup();

    SentinelGroup(const SentinelGroup&) = delete;
    SentinelGroup& operator=(const SentinelGroup&) = delete;
    SentinelGroup(SentinelGroup&&) = delete;
    SentinelGroup& operator=(SentinelGroup&&) = delete;

    const Options& options() const { return opts_; }
    const std::string& master_name() const { return opts_.master_name; }
    std::vector<int> sentinel_ports() const;
    // "127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3" (the product's --sentinel format).
    std::string sentinel_addresses() const;
    // Pid of sentinel `index`'s current (or most recent) process.
    pid_t sentinel_pid(int index) const;

    // The master port that the first answering sentinel reports now (waits until one answers).
    int master_port() const;
    // "redis://[:<data password>@]127.0.0.1:<port>/<db>" (the password percent-encoded;
    // "rediss://" in TLS mode).
    std::string data_url_of(int port, int db = 0) const;

    // Data node `index` (0 or 1); its index is stable, its role changes with failovers.
    RedisServer& node(int index);
    const RedisServer& node(int index) const;
    // The node the sentinels report as master and that answers ROLE master (waits until one
    // does: right after a failover the old master still says master until it is reconfigured).
    int master_index() const;
    int replica_index() const { return 1 - master_index(); }

    // Connections with the data password, or the sentinel password, over TLS in TLS mode (tests'
    // options: SIGPIPE ignored, 60 s reply timeout). Throw if the node or sentinel cannot be
    // reached.
    std::unique_ptr<SyncConnection> connect_node(int index) const;
    std::unique_ptr<SyncConnection> connect_sentinel(int index) const;

    // SENTINEL FAILOVER on the first answering sentinel, retried while it answers NOGOODSLAVE or
    // INPROG. Returns the new master's port once every sentinel reports it and it answers ROLE
    // master. The old master becomes its replica only later (about 15 s): call
    // wait_replica_in_sync() before a next failover.
    int failover();
    // Waits until the node other than master_index() is a replica of the master with its link up,
    // the master lists it online, and every sentinel reports the master, lists that replica
    // with master-link-status ok, pointing at the master and not flagged s_down, o_down or
    // disconnected, and sees the two other sentinels; a failover can then run at once.
    void wait_replica_in_sync();

    // SIGKILLs the current master's process; returns the promoted node's port once every
    // running sentinel reports it and it answers ROLE master.
    int kill_master();
    // Starts killed node `index` again and waits until it answers ROLE slave of the master the
    // sentinels report (they reconfigure it; use wait_replica_in_sync() to wait for its sync).
    void restart_node(int index);

    // Stops all three sentinels (SIGTERM, then SIGKILL after 5 s). No-op for a stopped one.
    void stop_sentinels();
    // Starts the stopped sentinels again on their ports with their rewritten configs; returns once
    // every sentinel answers, reports a master that answers ROLE master, and sees the two others.
    void start_sentinels();

    // Contents of sentinel `index`'s sentinel.log.
    std::string sentinel_log(int index) const;

private:
    struct Sentinel;
    enum class Launch { Ready, BindFailed };

    Launch launch_sentinel(Sentinel& s);
    void write_sentinel_config(const Sentinel& s) const;
    // 127.0.0.1:port with `password`, and TLS settings in TLS mode.
    RedisEndpoint endpoint_of(int port, const std::string& password) const;
    std::optional<Reply> sentinel_command(int index, const std::vector<std::string>& argv) const;
    std::optional<Reply> node_command(int index, const std::vector<std::string>& argv) const;
    std::optional<int> reported_master_port(int index) const;
    std::string role_of(int index) const;
    int index_of_port(int port) const;
    // One pass of wait_replica_in_sync()'s condition for `master`; `why` says what does not hold.
    bool replica_in_sync(int master, std::string* why) const;
    bool sentinel_ready(int index, int master, std::string* why) const;
    // Waits until every running sentinel reports a master other than `old_port` (-1: any) that
    // answers ROLE master; returns its node index.
    int wait_switched_from(int old_port, const std::string& what) const;
    template <class Check>
    void wait_for(const std::string& what, Check check) const;
    std::string failure_report(const std::string& what) const;

    Options opts_;
    std::unique_ptr<RedisServer> nodes_[kNodes];
    std::vector<std::unique_ptr<Sentinel>> sentinels_;
};

}  // namespace expiry::test
