// SentinelGroup implementation: two RedisServer data nodes, three sentinel processes with private
// configs, and the waits on what the nodes (ROLE, INFO) and sentinels (SENTINEL ...) report.
#include "support/redis_sentinel.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/fixture_files.h"
#include "support/redis_client.h"
#include "support/server_binaries.h"

namespace expiry::test {
namespace {

constexpr const char* kHost = "127.0.0.1";
constexpr auto kSentinelStartDeadline = std::chrono::seconds(10);
constexpr auto kProbeConnectTimeout = std::chrono::milliseconds(1000);
constexpr auto kProbeCommandTimeout = std::chrono::milliseconds(2000);
constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr int kPortAttempts = 5;
constexpr int kQuorum = 2;
constexpr int kDownAfterMs = 2000;
constexpr int kFailoverTimeoutMs = 10000;

// The reply to `argv` on a fresh short-timeout connection to `endpoint`, or nullopt if the
// server cannot be reached, refuses TLS or AUTH, or does not answer in time.
std::optional<Reply> probe(const RedisEndpoint& endpoint, const std::vector<std::string>& argv) {
    SyncConnection::Options options;
    options.connect_timeout = kProbeConnectTimeout;
    options.command_timeout = kProbeCommandTimeout;
    try {
        SyncConnection c(endpoint, options);
        Reply r = c.command(argv);
        if (r.is_io_error()) return std::nullopt;
        return r;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// The field/value pairs of a flat array reply (SENTINEL MASTER, one entry of SENTINEL REPLICAS).
std::map<std::string, std::string> pairs_of(const Reply& r) {
    std::map<std::string, std::string> out;
    for (size_t i = 0; i + 1 < r.elements.size(); i += 2) out[r.elements[i].str] = r.elements[i + 1].str;
    return out;
}

bool has_flag(const std::string& flags, const std::string& flag) {
    std::stringstream ss(flags);
    std::string f;
    while (std::getline(ss, f, ','))
        if (f == flag) return true;
    return false;
}

std::string percent_encoded(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += static_cast<char>(c);
        } else {
            char buf[4];
            std::snprintf(buf, sizeof buf, "%%%02X", c);
            out += buf;
        }
    }
    return out;
}

std::string make_temp_dir() {
    std::string tmpl = "/tmp/expiry-sentinel-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr)
        throw std::runtime_error(std::string("SentinelGroup: mkdtemp failed: ") + std::strerror(errno));
    return tmpl;
}

// The redis.conf lines that make a node or sentinel's outgoing links (replication, and a
// sentinel's links to the nodes and the other sentinels) use TLS.
std::vector<std::string> tls_outgoing_lines(const RedisTlsOptions& tls) {
    std::vector<std::string> lines = {"tls-replication yes"};
    if (tls.auth_clients) {
        lines.push_back("tls-client-cert-file \"" + tls.probe_cert_file + "\"");
        lines.push_back("tls-client-key-file \"" + tls.probe_key_file + "\"");
    }
    return lines;
}

}  // namespace

struct SentinelGroup::Sentinel {
    std::string dir;
    std::string conf_path;
    std::string log_path;
    std::string stdout_path;
    int port = 0;
    std::unique_ptr<ChildProcess> child;
};

SentinelGroup::SentinelGroup() : SentinelGroup(Options{}) {}

SentinelGroup::SentinelGroup(Options opts) : opts_(std::move(opts)) {
    try {
        std::vector<std::string> lines = {"repl-diskless-sync-delay 0"};
        if (!opts_.data_password.empty()) {
            lines.push_back("requirepass \"" + opts_.data_password + "\"");
            lines.push_back("masterauth \"" + opts_.data_password + "\"");
        }
        if (opts_.tls) {
            const auto tls_lines = tls_outgoing_lines(*opts_.tls);
            lines.insert(lines.end(), tls_lines.begin(), tls_lines.end());
        }
        RedisServer::Options master;
        master.extra_config_lines = lines;
        master.tls = opts_.tls;
        nodes_[0] = std::make_unique<RedisServer>(master);
        RedisServer::Options replica;
        replica.extra_config_lines = lines;
        replica.tls = opts_.tls;
        replica.extra_config_lines.push_back("replicaof 127.0.0.1 " + std::to_string(nodes_[0]->port()));
        nodes_[1] = std::make_unique<RedisServer>(replica);
        wait_for("the replica to sync before the sentinels start", [&](std::string* why) {
            const auto info = node_command(0, {"INFO", "replication"});
            const std::string needle = "port=" + std::to_string(nodes_[1]->port()) + ",state=online";
            if (info && info->str.find(needle) != std::string::npos) return true;
            *why = "master INFO replication: " + (info ? info->str : std::string("no answer"));
            return false;
        });

        for (int i = 0; i < kSentinels; ++i) {
            auto s = std::make_unique<Sentinel>();
            s->dir = make_temp_dir();
            s->conf_path = s->dir + "/sentinel.conf";
            s->log_path = s->dir + "/sentinel.log";
            s->stdout_path = s->dir + "/sentinel.stdout.log";
            sentinels_.push_back(std::move(s));
            Sentinel& sentinel = *sentinels_.back();
            bool ready = false;
            for (int attempt = 0; attempt < kPortAttempts && !ready; ++attempt) {
                sentinel.port = pick_free_port("SentinelGroup");
                write_sentinel_config(sentinel);
                ready = launch_sentinel(sentinel) == Launch::Ready;
            }
            if (!ready)
                throw std::runtime_error(failure_report("sentinel " + std::to_string(i) +
                                                        " could not bind a free port in " +
                                                        std::to_string(kPortAttempts) + " attempts"));
        }
        wait_replica_in_sync();
    } catch (...) {
        for (auto& s : sentinels_) {
            s->child.reset();
            std::error_code ec;
            std::filesystem::remove_all(s->dir, ec);
        }
        throw;  // the nodes stop in their destructors
    }
}

SentinelGroup::~SentinelGroup() {
    try {
        stop_sentinels();
    } catch (...) {
        // Destructors must not throw; the ChildProcess destructors below still SIGKILL.
    }
    for (auto& s : sentinels_) {
        s->child.reset();
        std::error_code ec;
        std::filesystem::remove_all(s->dir, ec);
    }
    for (auto& n : nodes_) n.reset();
}

void SentinelGroup::write_sentinel_config(const Sentinel& s) const {
    const std::string& name = opts_.master_name;
    std::ofstream conf(s.conf_path, std::ios::trunc);
    conf << "bind 127.0.0.1\n";
    if (opts_.tls) {
        const RedisTlsOptions& tls = *opts_.tls;
        conf << "port 0\n"
             << "tls-port " << s.port << "\n"
             << "tls-cert-file \"" << tls.cert_file << "\"\n"
             << "tls-key-file \"" << tls.key_file << "\"\n"
             << "tls-ca-cert-file \"" << tls.ca_cert_file << "\"\n"
             << "tls-auth-clients " << (tls.auth_clients ? "yes" : "no") << "\n";
        for (const auto& line : tls_outgoing_lines(tls)) conf << line << "\n";
    } else {
        conf << "port " << s.port << "\n";
    }
    conf << "daemonize no\n"
         << "protected-mode no\n"
         << "dir \"" << s.dir << "\"\n"
         << "logfile \"" << s.log_path << "\"\n"
         << "sentinel monitor " << name << " " << kHost << " " << nodes_[0]->port() << " " << kQuorum << "\n"
         << "sentinel down-after-milliseconds " << name << " " << kDownAfterMs << "\n"
         << "sentinel failover-timeout " << name << " " << kFailoverTimeoutMs << "\n"
         << "sentinel parallel-syncs " << name << " 1\n";
    if (!opts_.data_password.empty())
        conf << "sentinel auth-pass " << name << " \"" << opts_.data_password << "\"\n";
    if (!opts_.sentinel_password.empty()) {
        conf << "requirepass \"" << opts_.sentinel_password << "\"\n"
             << "sentinel sentinel-pass \"" << opts_.sentinel_password << "\"\n";
    }
    conf.close();
    if (!conf) throw std::runtime_error("SentinelGroup: cannot write " + s.conf_path);
}

SentinelGroup::Launch SentinelGroup::launch_sentinel(Sentinel& s) {
    const auto log_offset = file_size_or_zero(s.log_path);
    s.child.reset();
    s.child = std::make_unique<ChildProcess>(redis_sentinel_binary(), std::vector<std::string>{s.conf_path, "--sentinel"},
                                             std::vector<std::pair<std::string, std::string>>{},
                                             s.stdout_path);
    const std::string needle = "process_id:" + std::to_string(s.child->pid()) + "\r\n";
    const auto end = std::chrono::steady_clock::now() + kSentinelStartDeadline;
    for (;;) {
        const auto info = probe(endpoint_of(s.port, opts_.sentinel_password), {"INFO", "server"});
        if (info && info->type == Reply::Type::String && info->str.find(needle) != std::string::npos)
            return Launch::Ready;
        if (!s.child->running()) {
            const std::string log = read_file(s.log_path);
            const std::string fresh = log.size() > log_offset ? log.substr(log_offset) : std::string();
            if (fresh.find("Address already in use") != std::string::npos) return Launch::BindFailed;
            throw std::runtime_error(failure_report("a sentinel on port " + std::to_string(s.port) +
                                                    " exited during startup"));
        }
        if (std::chrono::steady_clock::now() >= end) {
            s.child->kill_hard();
            throw std::runtime_error(failure_report("a sentinel on port " + std::to_string(s.port) +
                                                    " did not answer within 10 s"));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

template <class Check>
void SentinelGroup::wait_for(const std::string& what, Check check) const {
    const auto end = std::chrono::steady_clock::now() + opts_.ready_deadline;
    std::string why;
    for (;;) {
        why.clear();
        if (check(&why)) return;
        if (std::chrono::steady_clock::now() >= end) break;
        std::this_thread::sleep_for(kPoll);
    }
    throw std::runtime_error(failure_report("timed out after " +
                                            std::to_string(opts_.ready_deadline.count()) +
                                            " ms waiting for " + what + "; last seen: " + why));
}

std::optional<Reply> SentinelGroup::sentinel_command(int index, const std::vector<std::string>& argv) const {
    return probe(endpoint_of(sentinels_.at(index)->port, opts_.sentinel_password), argv);
}

std::optional<Reply> SentinelGroup::node_command(int index, const std::vector<std::string>& argv) const {
    return probe(endpoint_of(node(index).port(), opts_.data_password), argv);
}

RedisEndpoint SentinelGroup::endpoint_of(int port, const std::string& password) const {
    RedisEndpoint endpoint = test_endpoint(kHost, port);
    endpoint.password = password;
    if (opts_.tls) {
        endpoint.tls.enabled = true;
        endpoint.tls.ca_cert_file = opts_.tls->ca_cert_file;
        endpoint.tls.cert_file = opts_.tls->probe_cert_file;
        endpoint.tls.key_file = opts_.tls->probe_key_file;
    }
    return endpoint;
}

std::optional<int> SentinelGroup::reported_master_port(int index) const {
    const auto r = sentinel_command(index, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", opts_.master_name});
    if (!r || r->type != Reply::Type::Array || r->elements.size() != 2) return std::nullopt;
    try {
        return std::stoi(r->elements[1].str);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::string SentinelGroup::role_of(int index) const {
    const auto r = node_command(index, {"ROLE"});
    if (!r || r->type != Reply::Type::Array || r->elements.empty()) return "";
    return r->elements[0].str;
}

int SentinelGroup::index_of_port(int port) const {
    for (int i = 0; i < kNodes; ++i)
        if (nodes_[i]->port() == port) return i;
    return -1;
}

std::vector<int> SentinelGroup::sentinel_ports() const {
    std::vector<int> ports;
    for (const auto& s : sentinels_) ports.push_back(s->port);
    return ports;
}

std::string SentinelGroup::sentinel_addresses() const {
    std::string out;
    for (const auto& s : sentinels_) {
        if (!out.empty()) out += ",";
        out += std::string(kHost) + ":" + std::to_string(s->port);
    }
    return out;
}

pid_t SentinelGroup::sentinel_pid(int index) const {
    const auto& s = sentinels_.at(index);
    return s->child ? s->child->pid() : -1;
}

std::string SentinelGroup::sentinel_log(int index) const { return read_file(sentinels_.at(index)->log_path); }

int SentinelGroup::master_port() const {
    int port = -1;
    wait_for("a sentinel to report the master", [&](std::string* why) {
        for (int i = 0; i < kSentinels; ++i) {
            if (const auto p = reported_master_port(i)) {
                port = *p;
                return true;
            }
        }
        *why = "no sentinel answered GET-MASTER-ADDR-BY-NAME " + opts_.master_name;
        return false;
    });
    return port;
}

std::string SentinelGroup::data_url_of(int port, int db) const {
    std::string url = opts_.tls ? "rediss://" : "redis://";
    if (!opts_.data_password.empty()) url += ":" + percent_encoded(opts_.data_password) + "@";
    return url + kHost + ":" + std::to_string(port) + "/" + std::to_string(db);
}

RedisServer& SentinelGroup::node(int index) {
    if (index < 0 || index >= kNodes) throw std::out_of_range("SentinelGroup::node: no node " + std::to_string(index));
    return *nodes_[index];
}

const RedisServer& SentinelGroup::node(int index) const {
    if (index < 0 || index >= kNodes) throw std::out_of_range("SentinelGroup::node: no node " + std::to_string(index));
    return *nodes_[index];
}

int SentinelGroup::master_index() const {
    int master = -1;
    wait_for("a master that the sentinels report and that answers ROLE master", [&](std::string* why) {
        for (int i = 0; i < kSentinels; ++i) {
            const auto p = reported_master_port(i);
            if (!p) continue;
            master = index_of_port(*p);
            if (master >= 0 && role_of(master) == "master") return true;
            *why = "sentinel " + std::to_string(i) + " reports port " + std::to_string(*p) +
                   (master >= 0 ? ", whose ROLE is '" + role_of(master) + "'" : ", not a node of this group");
            return false;
        }
        *why = "no sentinel answered GET-MASTER-ADDR-BY-NAME " + opts_.master_name;
        return false;
    });
    return master;
}

std::unique_ptr<SyncConnection> SentinelGroup::connect_node(int index) const {
    return std::make_unique<SyncConnection>(endpoint_of(node(index).port(), opts_.data_password),
                                            test_connection_options());
}

std::unique_ptr<SyncConnection> SentinelGroup::connect_sentinel(int index) const {
    return std::make_unique<SyncConnection>(endpoint_of(sentinels_.at(index)->port, opts_.sentinel_password),
                                            test_connection_options());
}

bool SentinelGroup::sentinel_ready(int index, int master, std::string* why) const {
    const std::string who = "sentinel " + std::to_string(index) + ": ";
    const int master_port = nodes_[master]->port();
    const int replica_port = nodes_[1 - master]->port();
    const auto reported = reported_master_port(index);
    if (reported != master_port) {
        *why = who + "reports master port " + (reported ? std::to_string(*reported) : "none");
        return false;
    }
    const auto m = sentinel_command(index, {"SENTINEL", "MASTER", opts_.master_name});
    if (!m || m->type != Reply::Type::Array) {
        *why = who + "SENTINEL MASTER: " + (m ? m->describe() : "no answer");
        return false;
    }
    const auto fields = pairs_of(*m);
    const std::string flags = fields.count("flags") ? fields.at("flags") : "";
    if (fields.count("num-other-sentinels") == 0 || fields.at("num-other-sentinels") != std::to_string(kSentinels - 1) ||
        flags != "master") {
        *why = who + "SENTINEL MASTER: " + m->describe();
        return false;
    }
    const auto others = sentinel_command(index, {"SENTINEL", "SENTINELS", opts_.master_name});
    if (!others || others->type != Reply::Type::Array) {
        *why = who + "SENTINEL SENTINELS: " + (others ? others->describe() : "no answer");
        return false;
    }
    for (const auto& entry : others->elements) {
        const auto o = pairs_of(entry);
        const std::string oflags = o.count("flags") ? o.at("flags") : "";
        if (has_flag(oflags, "s_down") || has_flag(oflags, "disconnected")) {
            *why = who + "SENTINEL SENTINELS: " + others->describe();
            return false;
        }
    }
    const auto replicas = sentinel_command(index, {"SENTINEL", "REPLICAS", opts_.master_name});
    if (!replicas || replicas->type != Reply::Type::Array) {
        *why = who + "SENTINEL REPLICAS: " + (replicas ? replicas->describe() : "no answer");
        return false;
    }
    for (const auto& entry : replicas->elements) {
        const auto r = pairs_of(entry);
        if (r.count("port") == 0 || r.at("port") != std::to_string(replica_port)) continue;
        const std::string rflags = r.count("flags") ? r.at("flags") : "";
        if (has_flag(rflags, "s_down") || has_flag(rflags, "o_down") || has_flag(rflags, "disconnected") ||
            !has_flag(rflags, "slave") || r.count("master-link-status") == 0 ||
            r.at("master-link-status") != "ok" || r.count("master-port") == 0 ||
            r.at("master-port") != std::to_string(master_port))
            break;
        return true;
    }
    *why = who + "SENTINEL REPLICAS: " + replicas->describe();
    return false;
}

bool SentinelGroup::replica_in_sync(int master, std::string* why) const {
    const int replica = 1 - master;
    const auto rinfo = node_command(replica, {"INFO", "replication"});
    if (!rinfo || info_field(rinfo->str, "role") != "slave" ||
        info_field(rinfo->str, "master_port") != std::to_string(nodes_[master]->port()) ||
        info_field(rinfo->str, "master_link_status") != "up") {
        *why = "replica (node " + std::to_string(replica) + ") INFO replication: " + (rinfo ? rinfo->str : "no answer");
        return false;
    }
    const auto minfo = node_command(master, {"INFO", "replication"});
    const std::string needle = "port=" + std::to_string(nodes_[replica]->port()) + ",state=online";
    if (!minfo || info_field(minfo->str, "role") != "master" || minfo->str.find(needle) == std::string::npos) {
        *why = "master (node " + std::to_string(master) + ") INFO replication: " + (minfo ? minfo->str : "no answer");
        return false;
    }
    for (int i = 0; i < kSentinels; ++i)
        if (!sentinel_ready(i, master, why)) return false;
    return true;
}

void SentinelGroup::wait_replica_in_sync() {
    wait_for("the replica to be in sync and every sentinel ready for a failover", [&](std::string* why) {
        for (int master = 0; master < kNodes; ++master) {
            const auto p = reported_master_port(0);
            if (p && *p == nodes_[master]->port()) return replica_in_sync(master, why);
        }
        *why = "sentinel 0 reports no master of this group";
        return false;
    });
}

int SentinelGroup::wait_switched_from(int old_port, const std::string& what) const {
    int master = -1;
    wait_for(what, [&](std::string* why) {
        std::optional<int> port;
        for (int i = 0; i < kSentinels; ++i) {
            if (!sentinels_[i]->child || !sentinels_[i]->child->running()) continue;
            const auto p = reported_master_port(i);
            if (!p || *p == old_port || (port && *p != *port)) {
                *why = "sentinel " + std::to_string(i) + " reports master port " +
                       (p ? std::to_string(*p) : "none") + " (old master port " + std::to_string(old_port) + ")";
                return false;
            }
            port = p;
        }
        if (!port) {
            *why = "no sentinel is running";
            return false;
        }
        master = index_of_port(*port);
        if (master < 0) {
            *why = "the sentinels report port " + std::to_string(*port) + ", not a node of this group";
            return false;
        }
        const std::string role = role_of(master);
        if (role != "master") {
            *why = "node " + std::to_string(master) + " answers ROLE '" + role + "'";
            return false;
        }
        return true;
    });
    return nodes_[master]->port();
}

int SentinelGroup::failover() {
    const int old_port = nodes_[master_index()]->port();
    wait_for("SENTINEL FAILOVER to be accepted", [&](std::string* why) {
        for (int i = 0; i < kSentinels; ++i) {
            const auto r = sentinel_command(i, {"SENTINEL", "FAILOVER", opts_.master_name});
            if (!r) continue;
            if (r->type == Reply::Type::Status) return true;
            if (r->type == Reply::Type::Error &&
                (r->str.rfind("NOGOODSLAVE", 0) == 0 || r->str.rfind("INPROG", 0) == 0)) {
                *why = "sentinel " + std::to_string(i) + " answers " + r->str;
                return false;
            }
            throw std::runtime_error(failure_report("SENTINEL FAILOVER answered " + r->describe()));
        }
        *why = "no sentinel answered";
        return false;
    });
    return wait_switched_from(old_port, "every sentinel to report the new master after SENTINEL FAILOVER");
}

int SentinelGroup::kill_master() {
    const int master = master_index();
    const int old_port = nodes_[master]->port();
    nodes_[master]->kill_hard();
    return wait_switched_from(old_port, "the sentinels to promote a replica of the killed master");
}

void SentinelGroup::restart_node(int index) {
    node(index).start();
    wait_for("restarted node " + std::to_string(index) + " to become a replica of the master", [&](std::string* why) {
        const auto role = node_command(index, {"ROLE"});
        std::optional<int> master_port;
        for (int i = 0; i < kSentinels && !master_port; ++i) master_port = reported_master_port(i);
        if (role && role->type == Reply::Type::Array && role->elements.size() >= 3 &&
            role->elements[0].str == "slave" && master_port &&
            role->elements[2].type == Reply::Type::Integer && role->elements[2].integer == *master_port)
            return true;
        *why = "ROLE: " + (role ? role->describe() : std::string("no answer")) + ", sentinels' master port " +
               (master_port ? std::to_string(*master_port) : "none");
        return false;
    });
}

void SentinelGroup::stop_sentinels() {
    for (auto& s : sentinels_)
        if (s->child) s->child->terminate(std::chrono::seconds(5));
}

void SentinelGroup::start_sentinels() {
    for (size_t i = 0; i < sentinels_.size(); ++i) {
        Sentinel& s = *sentinels_[i];
        if (s.child && s.child->running()) continue;
        if (launch_sentinel(s) != Launch::Ready)
            throw std::runtime_error(failure_report("sentinel " + std::to_string(i) + " could not bind port " +
                                                    std::to_string(s.port) + " again"));
    }
    wait_for("the restarted sentinels to report the master and see each other", [&](std::string* why) {
        for (int i = 0; i < kSentinels; ++i) {
            const auto p = reported_master_port(i);
            const int master = p ? index_of_port(*p) : -1;
            if (master < 0 || role_of(master) != "master") {
                *why = "sentinel " + std::to_string(i) + " reports master port " + (p ? std::to_string(*p) : "none");
                return false;
            }
            const auto m = sentinel_command(i, {"SENTINEL", "MASTER", opts_.master_name});
            const auto fields = m ? pairs_of(*m) : std::map<std::string, std::string>{};
            if (fields.count("num-other-sentinels") == 0 ||
                fields.at("num-other-sentinels") != std::to_string(kSentinels - 1)) {
                *why = "sentinel " + std::to_string(i) + " SENTINEL MASTER: " + (m ? m->describe() : "no answer");
                return false;
            }
        }
        return true;
    });
}

std::string SentinelGroup::failure_report(const std::string& what) const {
    std::string msg = "SentinelGroup(" + opts_.master_name + "): " + what;
    for (int i = 0; i < kNodes; ++i) {
        if (!nodes_[i]) continue;
        msg += "\n--- tail of node " + std::to_string(i) + " (port " + std::to_string(nodes_[i]->port()) +
               ") redis.log ---\n" + tail_lines(nodes_[i]->log(), 20);
    }
    for (size_t i = 0; i < sentinels_.size(); ++i) {
        const Sentinel& s = *sentinels_[i];
        msg += "\n--- tail of sentinel " + std::to_string(i) + " (port " + std::to_string(s.port) +
               ") sentinel.log ---\n" + tail_lines(read_file(s.log_path), 20);
        const std::string out = read_file(s.stdout_path);
        if (!out.empty()) msg += "\n--- its stdout/stderr ---\n" + tail_lines(out, 10);
    }
    return msg;
}

}  // namespace expiry::test
