// RedisCluster implementation: node processes in temp dirs, redis-cli --cluster create, and
// deadline-bound waits on what every node reports.
#include "support/redis_cluster.h"
#include "support/redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "redis/cluster_slots.h"
#include "redis/hash_slot.h"
#include "support/fixture_files.h"
#include "support/redis_client.h"
#include "support/server_binaries.h"
#include "support/wait.h"

namespace expiry::test {

struct RedisCluster::Process {
    std::string dir;
    std::string conf_path;
    std::string log_path;
    std::string stdout_path;
    int port = 0;
    std::unique_ptr<ChildProcess> child;

    bool running() const { return child && child->running(); }
};

namespace {

using namespace std::chrono_literals;

constexpr const char* kHost = "127.0.0.1";
constexpr int kFirstPort = 10000;
constexpr int kLastPort = 22767;  // + 10000 for the bus stays below 32768
constexpr int kBusOffset = 10000;
constexpr int kPortAttempts = 5;
constexpr auto kNodeReadyDeadline = std::chrono::seconds(10);
constexpr auto kProbeTimeout = std::chrono::milliseconds(300);
constexpr int kMigrateBatch = 100;             // keys per MIGRATE
constexpr int kMigrateTimeoutMs = 10000;       // MIGRATE's own timeout

// True if a listener could bind 127.0.0.1:port right now.
bool port_bindable(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    return ok;
}

// A port in kFirstPort..kLastPort, not in `taken`, whose port and bus port are both free now.
int pick_cluster_port(const std::set<int>& taken) {
    static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
    std::uniform_int_distribution<int> dist(kFirstPort, kLastPort);
    for (int i = 0; i < 1000; ++i) {
        const int port = dist(rng);
        if (taken.count(port) || taken.count(port + kBusOffset)) continue;
        if (port_bindable(port) && port_bindable(port + kBusOffset)) return port;
    }
    throw std::runtime_error("RedisCluster: no free port pair in 10000..32767");
}

SyncConnection::Options probe_options() {
    SyncConnection::Options options;
    options.connect_timeout = kProbeTimeout;
    options.command_timeout = std::chrono::milliseconds(2000);
    return options;
}

// True if the server on `port` answers PING and is process `pid`.
bool is_ready(int port, pid_t pid) {
    try {
        SyncConnection c(test_endpoint(kHost, port), probe_options());
        const Reply pong = c.command({"PING"});
        if (pong.type != Reply::Type::Status || pong.str != "PONG") return false;
        const Reply info = c.command({"INFO", "server"});
        return info.type == Reply::Type::String &&
               info.str.find("process_id:" + std::to_string(pid) + "\r\n") != std::string::npos;
    } catch (const std::exception&) {
        return false;
    }
}

// A text form of a slot map that two nodes agree on exactly when they report the same primaries
// and replicas for the same ranges (replica order does not matter).
std::string canonical(const SlotMap& map) {
    std::string out;
    for (const auto& r : map.ranges()) {
        out += std::to_string(r.first) + "-" + std::to_string(r.last) + ":" + std::to_string(r.primary.port);
        std::vector<int> replicas;
        for (const auto& n : r.replicas) replicas.push_back(n.port);
        std::sort(replicas.begin(), replicas.end());
        for (int p : replicas) out += "," + std::to_string(p);
        out += " ";
    }
    return out;
}

std::string join(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) out += (out.empty() ? "" : " ") + a.substr(0, 64);
    return out;
}

}  // namespace

const char* to_string(RedisCluster::Role role) {
    switch (role) {
        case RedisCluster::Role::Primary: return "primary";
        case RedisCluster::Role::Replica: return "replica";
        case RedisCluster::Role::Down: return "down";
    }
    return "?";
}

RedisCluster::RedisCluster() : RedisCluster(Options{}) {}

RedisCluster::RedisCluster(Options opts) : opts_(std::move(opts)) {
    if (opts_.primaries < 3) throw std::invalid_argument("RedisCluster: redis-cli needs at least 3 primaries");
    std::string tmpl = "/tmp/expiry-cluster-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr)
        throw std::runtime_error(std::string("RedisCluster: mkdtemp failed: ") + std::strerror(errno));
    dir_ = tmpl;
    try {
        const int total = opts_.primaries * 2;
        for (int i = 0; i < total; ++i) {
            auto p = std::make_unique<Process>();
            p->dir = dir_ + "/node" + std::to_string(i);
            std::filesystem::create_directory(p->dir);
            p->conf_path = p->dir + "/redis.conf";
            p->log_path = p->dir + "/redis.log";
            p->stdout_path = p->dir + "/redis.stdout.log";
            procs_.push_back(std::move(p));
            Node n;
            n.index = i;
            n.host = kHost;
            nodes_.push_back(n);
        }
        launch_all();
        create_cluster();
        wait_cluster_ok();
    } catch (...) {
        for (auto& p : procs_) p->child.reset();  // SIGKILL + reap
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        throw;
    }
}

RedisCluster::~RedisCluster() {
    for (auto& p : procs_) {
        if (p->child) p->child->send_signal(SIGTERM);
    }
    for (auto& p : procs_) {
        if (!p->child) continue;
        try {
            if (!p->child->wait_exit(5s)) p->child->kill_hard();
        } catch (...) {
            // ignored: the ChildProcess destructor SIGKILLs and reaps
        }
        p->child.reset();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

void RedisCluster::launch_all() {
    std::set<int> taken;
    auto write_conf = [&](Process& p) {
        std::ofstream conf(p.conf_path, std::ios::trunc);
        conf << "bind 127.0.0.1\n"
             << "port " << p.port << "\n"
             << "dir \"" << p.dir << "\"\n"
             << "save \"\"\n"
             << "appendonly no\n"
             << "daemonize no\n"
             << "protected-mode no\n"
             << "logfile \"" << p.log_path << "\"\n"
             << "repl-diskless-sync-delay 0\n"  // replicas sync at once, not after 5 s
             // CLUSTER SLOTS lists a replica only once its replication offset is not 0, which on an
             // idle primary happens at its first replication PING (default: after 10 s).
             << "repl-ping-replica-period 1\n"
             << "cluster-enabled yes\n"
             << "cluster-config-file \"" << p.dir << "/nodes.conf\"\n"
             << "cluster-node-timeout " << opts_.node_timeout.count() << "\n"
             << "notify-keyspace-events " << (opts_.notify_expired ? "Ex" : "\"\"") << "\n";
        for (const auto& line : opts_.extra_config_lines) conf << line << "\n";
        conf.close();
        if (!conf) throw std::runtime_error("RedisCluster: cannot write " + p.conf_path);
    };
    auto start = [&](int i) {
        Process& p = *procs_[i];
        p.port = pick_cluster_port(taken);
        taken.insert(p.port);
        taken.insert(p.port + kBusOffset);
        nodes_[i].port = p.port;
        write_conf(p);
        p.child = std::make_unique<ChildProcess>(redis_server_binary(), std::vector<std::string>{p.conf_path},
                                                 std::vector<std::pair<std::string, std::string>>{},
                                                 p.stdout_path);
        nodes_[i].pid = p.child->pid();
    };
    for (size_t i = 0; i < procs_.size(); ++i) start(static_cast<int>(i));

    for (size_t i = 0; i < procs_.size(); ++i) {
        Process& p = *procs_[i];
        for (int attempt = 1;; ++attempt) {
            const bool ready = wait_until(
                [&] { return is_ready(p.port, p.child->pid()) || !p.child->running(); }, kNodeReadyDeadline, 20ms);
            if (ready && p.child->running()) break;
            const bool bind_failed = read_file(p.log_path).find("Address already in use") != std::string::npos;
            if (!ready || !bind_failed || attempt >= kPortAttempts)
                throw std::runtime_error(failure_report("node " + std::to_string(i) + " did not start"));
            p.child.reset();
            std::filesystem::remove(p.log_path);
            start(static_cast<int>(i));
        }
        const Reply id = command(nodes_[i], {"CLUSTER", "MYID"});
        if (id.type != Reply::Type::String)
            throw std::runtime_error(failure_report("CLUSTER MYID: " + id.describe()));
        nodes_[i].id = id.str;
    }
}

void RedisCluster::create_cluster() {
    std::vector<std::string> args{"--cluster", "create"};
    for (const auto& n : nodes_) args.push_back(std::string(kHost) + ":" + std::to_string(n.port));
    args.insert(args.end(), {"--cluster-replicas", "1", "--cluster-yes"});
    ChildProcess cli(redis_cli_binary(), args, {}, dir_ + "/cluster-create.log");
    const auto status = cli.wait_exit(opts_.ready_deadline);
    if (!status) cli.kill_hard();
    if (!status || *status != 0) {
        throw std::runtime_error(failure_report("redis-cli --cluster create failed:\n" +
                                                tail_lines(cli.output(), 40)));
    }
}

std::vector<RedisCluster::Node> RedisCluster::nodes() const {
    for (auto& n : nodes_) {
        n.role = Role::Down;
        if (!procs_[n.index]->running()) continue;
        try {
            const Reply role = command(n, {"ROLE"});
            if (role.type == Reply::Type::Array && !role.elements.empty()) {
                if (role.elements[0].str == "master") n.role = Role::Primary;
                if (role.elements[0].str == "slave") n.role = Role::Replica;
            }
        } catch (const std::exception&) {
            // not answering: Down
        }
    }
    return nodes_;
}

const RedisCluster::Node& RedisCluster::node(int index) const { return nodes_.at(static_cast<size_t>(index)); }

std::vector<RedisCluster::Node> RedisCluster::primaries() const {
    std::vector<Node> all = nodes();
    std::set<int> indexes;
    for (const auto& p : slot_map().primaries()) {
        const int i = index_of_port(p.port);
        if (i >= 0 && procs_[i]->running()) indexes.insert(i);
    }
    std::vector<Node> out;
    for (int i : indexes) out.push_back(all[i]);
    std::sort(out.begin(), out.end(), [](const Node& a, const Node& b) { return a.port < b.port; });
    return out;
}

std::vector<RedisCluster::Node> RedisCluster::replicas() const {
    std::vector<Node> out;
    for (const auto& n : nodes()) {
        if (n.role == Role::Replica) out.push_back(n);
    }
    return out;
}

std::string RedisCluster::seed_url() const {
    const auto p = primaries();
    if (p.empty()) throw std::runtime_error("RedisCluster::seed_url: no running primary");
    return url_of(p.front());
}

std::string RedisCluster::url_of(const Node& node) const {
    return "redis://" + node.host + ":" + std::to_string(node.port);
}

int RedisCluster::index_of_port(int port) const {
    for (const auto& n : nodes_) {
        if (n.port == port) return n.index;
    }
    return -1;
}

SlotMap RedisCluster::slot_map() const {
    std::string last = "no node is running";
    for (const auto& n : nodes_) {
        if (!procs_[n.index]->running()) continue;
        try {
            std::string err;
            auto map = SlotMap::from_cluster_slots(command(n, {"CLUSTER", "SLOTS"}), kHost, &err);
            if (map) return *map;
            last = err;
        } catch (const std::exception& e) {
            last = e.what();
        }
    }
    throw std::runtime_error("RedisCluster: no slot map: " + last);
}

int RedisCluster::owner_index(int slot) const {
    const NodeAddress* owner = nullptr;
    const SlotMap map = slot_map();
    owner = map.primary_of(slot);
    if (!owner) throw std::runtime_error("RedisCluster: slot " + std::to_string(slot) + " is unassigned");
    const int i = index_of_port(owner->port);
    if (i < 0) throw std::runtime_error("RedisCluster: slot owner " + owner->to_string() + " is not ours");
    return i;
}

RedisCluster::Node RedisCluster::primary_for_slot(int slot) const {
    const int i = owner_index(slot);
    nodes();  // refresh roles
    return nodes_[i];
}

std::unique_ptr<SyncConnection> RedisCluster::connect(const Node& node) const {
    return connect_redis(node.host, node.port);
}

Reply RedisCluster::command(const Node& node, const std::vector<std::string>& argv) const {
    SyncConnection c(test_endpoint(node.host, node.port), probe_options());
    return c.command(argv);
}

bool RedisCluster::running(const Node& node) const { return procs_.at(node.index)->running(); }

void RedisCluster::kill_hard(const Node& node) {
    Process& p = *procs_.at(node.index);
    if (p.child) p.child->kill_hard();
}

void RedisCluster::restart(const Node& node) {
    Process& p = *procs_.at(node.index);
    if (p.running()) throw std::logic_error("RedisCluster::restart: node is running");
    p.child.reset();
    p.child = std::make_unique<ChildProcess>(redis_server_binary(), std::vector<std::string>{p.conf_path},
                                             std::vector<std::pair<std::string, std::string>>{}, p.stdout_path);
    nodes_[node.index].pid = p.child->pid();
    if (!wait_until([&] { return is_ready(p.port, p.child->pid()) || !p.child->running(); }, kNodeReadyDeadline,
                    20ms) ||
        !p.child->running()) {
        throw std::runtime_error(failure_report("node " + std::to_string(node.index) + " did not restart"));
    }
}

void RedisCluster::manual_failover(const Node& replica) {
    const Reply r = command(replica, {"CLUSTER", "FAILOVER"});
    if (r.type != Reply::Type::Status)
        throw std::runtime_error("RedisCluster: CLUSTER FAILOVER on " + std::to_string(replica.port) + ": " +
                                 r.describe());
    const bool promoted = wait_until(
        [&] {
            try {
                const Reply role = command(replica, {"ROLE"});
                return role.type == Reply::Type::Array && !role.elements.empty() &&
                       role.elements[0].str == "master";
            } catch (const std::exception&) {
                return false;
            }
        },
        opts_.ready_deadline, 20ms);
    if (!promoted)
        throw std::runtime_error(failure_report("node " + std::to_string(replica.port) + " was not promoted"));
    wait_cluster_ok();
}

void RedisCluster::begin_migration(int slot, const Node& to) {
    const int from = owner_index(slot);
    if (from == to.index) throw std::invalid_argument("RedisCluster::begin_migration: the target owns the slot");
    auto expect_ok = [&](int node, const std::vector<std::string>& argv) {
        const Reply r = command(nodes_[node], argv);
        if (r.type != Reply::Type::Status)
            throw std::runtime_error("RedisCluster: " + join(argv) + " on " + std::to_string(nodes_[node].port) +
                                     ": " + r.describe());
    };
    const std::string s = std::to_string(slot);
    expect_ok(to.index, {"CLUSTER", "SETSLOT", s, "IMPORTING", nodes_[from].id});
    expect_ok(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", nodes_[to.index].id});
    migrations_.push_back(Migration{slot, from, to.index});
}

int RedisCluster::migrate_keys(int slot, int max_keys) {
    auto it = std::find_if(migrations_.begin(), migrations_.end(), [&](const Migration& m) { return m.slot == slot; });
    if (it == migrations_.end()) throw std::logic_error("RedisCluster::migrate_keys: no migration of that slot");
    const Node& from = nodes_[it->from];
    const Node& to = nodes_[it->to];
    const Reply keys = command(from, {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), std::to_string(max_keys)});
    if (keys.type != Reply::Type::Array)
        throw std::runtime_error("RedisCluster: CLUSTER GETKEYSINSLOT: " + keys.describe());
    if (keys.elements.empty()) return 0;
    std::vector<std::string> argv{"MIGRATE", to.host, std::to_string(to.port), "", "0",
                                  std::to_string(kMigrateTimeoutMs), "KEYS"};
    for (const auto& k : keys.elements) argv.push_back(k.str);
    SyncConnection c(test_endpoint(from.host, from.port), test_connection_options());
    const Reply r = c.command(argv);
    if (r.type != Reply::Type::Status)  // OK, or NOKEY when they expired meanwhile
        throw std::runtime_error("RedisCluster: MIGRATE of slot " + std::to_string(slot) + ": " + r.describe());
    return static_cast<int>(keys.elements.size());
}

void RedisCluster::finish_migration(int slot) {
    auto it = std::find_if(migrations_.begin(), migrations_.end(), [&](const Migration& m) { return m.slot == slot; });
    if (it == migrations_.end()) throw std::logic_error("RedisCluster::finish_migration: no migration of that slot");
    while (migrate_keys(slot, kMigrateBatch) > 0) {
    }
    const Migration m = *it;
    migrations_.erase(it);
    const std::vector<std::string> argv{"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", nodes_[m.to].id};
    std::vector<int> order{m.to, m.from};
    for (const auto& n : nodes()) {
        if (n.role == Role::Primary && n.index != m.to && n.index != m.from) order.push_back(n.index);
    }
    for (int i : order) {
        const Reply r = command(nodes_[i], argv);
        if (r.type != Reply::Type::Status)
            throw std::runtime_error("RedisCluster: " + join(argv) + " on " + std::to_string(nodes_[i].port) + ": " +
                                     r.describe());
    }
}

void RedisCluster::move_slots(const std::vector<int>& slots, const Node& to) {
    for (int slot : slots) {
        if (owner_index(slot) == to.index) continue;
        begin_migration(slot, to);
        finish_migration(slot);
    }
    wait_cluster_ok();
}

bool RedisCluster::cluster_ok(std::string* why) const {
    std::string agreed;
    std::set<int> in_map;
    for (const auto& n : nodes_) {
        if (!procs_[n.index]->running()) continue;
        const std::string name = "node " + std::to_string(n.index) + " (" + std::to_string(n.port) + "): ";
        try {
            SyncConnection c(test_endpoint(n.host, n.port), probe_options());
            const Reply info = c.command({"CLUSTER", "INFO"});
            if (info_field(info.str, "cluster_state") != "ok") {
                *why = name + "cluster_state:" + info_field(info.str, "cluster_state");
                return false;
            }
            std::string err;
            auto map = SlotMap::from_cluster_slots(c.command({"CLUSTER", "SLOTS"}), kHost, &err);
            if (!map) {
                *why = name + err;
                return false;
            }
            if (!map->complete()) {
                *why = name + "slot map incomplete: " + canonical(*map);
                return false;
            }
            const std::string text = canonical(*map);
            if (agreed.empty()) {
                agreed = text;
                for (const auto& r : map->ranges()) {
                    in_map.insert(r.primary.port);
                    for (const auto& rep : r.replicas) in_map.insert(rep.port);
                }
            } else if (text != agreed) {
                *why = name + "slot map " + text + "differs from " + agreed;
                return false;
            }
            const Reply repl = c.command({"INFO", "replication"});
            if (info_field(repl.str, "role") == "slave" && info_field(repl.str, "master_link_status") != "up") {
                *why = name + "master_link_status:" + info_field(repl.str, "master_link_status");
                return false;
            }
        } catch (const std::exception& e) {
            *why = name + e.what();
            return false;
        }
    }
    for (const auto& n : nodes_) {
        if (procs_[n.index]->running() && !in_map.count(n.port)) {
            *why = "node " + std::to_string(n.index) + " (" + std::to_string(n.port) + ") is not in the slot map " +
                   agreed;
            return false;
        }
    }
    return true;
}

void RedisCluster::wait_cluster_ok() {
    std::string why;
    if (!wait_until([&] { return cluster_ok(&why); }, opts_.ready_deadline, 50ms))
        throw std::runtime_error(failure_report("cluster not ok: " + why));
}

std::string RedisCluster::log(const Node& node) const { return read_file(procs_.at(node.index)->log_path); }

std::string RedisCluster::failure_report(const std::string& what) const {
    std::string msg = "RedisCluster(" + dir_ + "): " + what;
    for (size_t i = 0; i < procs_.size(); ++i) {
        const Process& p = *procs_[i];
        msg += "\n--- node " + std::to_string(i) + " port " + std::to_string(p.port) + ": tail of redis.log ---\n" +
               tail_lines(read_file(p.log_path), 8);
        const std::string out = read_file(p.stdout_path);
        if (!out.empty()) msg += "\n--- stdout/stderr ---\n" + tail_lines(out, 8);
    }
    return msg;
}

}  // namespace expiry::test
