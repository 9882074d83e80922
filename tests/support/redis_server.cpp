// RedisServer implementation: config in a temp dir, free-port pick, readiness polling.
#include "support/redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/errors.h"
#include "redis/redis_error.h"
#include "support/fixture_files.h"
#include "support/redis_client.h"
#include "support/server_binaries.h"

namespace expiry::test {
namespace {

constexpr const char* kHost = "127.0.0.1";
constexpr auto kReadyDeadline = std::chrono::seconds(10);
constexpr auto kProbeTimeout = std::chrono::milliseconds(200);
constexpr auto kTlsProbeTimeout = std::chrono::seconds(2);  // one redis-cli run: exec, handshake, reply
constexpr int kPortAttempts = 5;

// True if a server answering PONG is listening on `port` and it is process `pid`. The connect
// and every reply are bounded by kProbeTimeout, so a wedged or foreign server cannot hang us.
bool is_ready_plain(int port, pid_t pid) {
    SyncConnection::Options options;
    options.connect_timeout = kProbeTimeout;
    options.command_timeout = kProbeTimeout;
    try {
        SyncConnection c(test_endpoint(kHost, port), options);
        const Reply pong = c.command({"PING"});
        if (classify(pong) == RedisErrorKind::NoAuth)
            return true;  // requirepass configured: up, but identity cannot be checked without auth
        if (pong.type != Reply::Type::Status || pong.str != "PONG") return false;
        const Reply info = c.command({"INFO", "server"});
        if (info.type != Reply::Type::String) return false;
        const std::string needle = "process_id:" + std::to_string(pid) + "\r\n";
        return info.str.find(needle) != std::string::npos;
    } catch (const std::exception&) {
        return false;  // not reachable (yet)
    }
}

// The output of `redis-cli --tls --insecure ... <command>` against `port` (stdout and stderr), or
// nullopt if it did not exit within kTlsProbeTimeout (it is killed then).
std::optional<std::string> redis_cli_tls(int port, const RedisTlsOptions& tls,
                                         const std::vector<std::string>& command) {
    std::vector<std::string> args = {"--tls", "--insecure", "-h", kHost, "-p", std::to_string(port)};
    if (!tls.probe_cert_file.empty()) {
        args.insert(args.end(), {"--cert", tls.probe_cert_file, "--key", tls.probe_key_file});
    }
    args.insert(args.end(), command.begin(), command.end());
    ChildProcess cli(redis_cli_binary(), args);
    if (!cli.wait_exit(kTlsProbeTimeout)) {
        cli.kill_hard();
        return std::nullopt;
    }
    return cli.output();
}

// is_ready_plain over TLS, through redis-cli (see RedisServer's TLS contract).
bool is_ready_tls(int port, pid_t pid, const RedisTlsOptions& tls) {
    const auto pong = redis_cli_tls(port, tls, {"PING"});
    if (!pong) return false;
    if (pong->find("NOAUTH") != std::string::npos) return true;  // requirepass: see is_ready_plain
    if (*pong != "PONG\n") return false;
    const auto info = redis_cli_tls(port, tls, {"INFO", "server"});
    if (!info) return false;
    const std::string needle = "process_id:" + std::to_string(pid);
    for (auto at = info->find(needle); at != std::string::npos; at = info->find(needle, at + 1)) {
        const auto end = at + needle.size();
        if (end < info->size() && ((*info)[end] == '\r' || (*info)[end] == '\n')) return true;
    }
    return false;
}

// Throws std::invalid_argument when the fixture could not probe a server with these settings.
void check_tls_options(const std::optional<RedisTlsOptions>& tls) {
    if (!tls) return;
    if (tls->cert_file.empty() || tls->key_file.empty() || tls->ca_cert_file.empty())
        throw std::invalid_argument("RedisServer: TLS mode needs cert_file, key_file and ca_cert_file");
    if (tls->auth_clients && (tls->probe_cert_file.empty() || tls->probe_key_file.empty()))
        throw std::invalid_argument("RedisServer: auth_clients needs probe_cert_file and probe_key_file");
}

}  // namespace

std::string tail_lines(const std::string& text, size_t max_lines) {
    size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') --pos;
    for (size_t n = 0; n < max_lines && pos > 0; ++n) {
        size_t nl = text.rfind('\n', pos - 1);
        if (nl == std::string::npos) return text;
        pos = nl;
    }
    return pos == 0 ? text : text.substr(pos + 1);
}

RedisServer::RedisServer() : RedisServer(Options{}) {}

RedisServer::RedisServer(Options opts) : opts_(std::move(opts)) {
    check_tls_options(opts_.tls);
    std::string tmpl = "/tmp/expiry-redis-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr)
        throw std::runtime_error(std::string("RedisServer: mkdtemp failed: ") + std::strerror(errno));
    dir_ = tmpl;
    conf_path_ = dir_ + "/redis.conf";
    log_path_ = dir_ + "/redis.log";
    stdout_path_ = dir_ + "/redis.stdout.log";

    try {
        for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
            port_ = pick_free_port("RedisServer");
            write_config();
            if (launch() == Launch::Ready) return;
        }
        throw std::runtime_error(failure_report("redis-server could not bind a free port in " +
                                                std::to_string(kPortAttempts) + " attempts"));
    } catch (...) {
        child_.reset();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        throw;
    }
}

RedisServer::~RedisServer() {
    try {
        stop();
    } catch (...) {
        // Destructors must not throw; the child destructor below still SIGKILLs.
    }
    child_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

void RedisServer::write_config() const {
    std::ofstream conf(conf_path_, std::ios::trunc);
    conf << "bind 127.0.0.1\n";
    if (opts_.tls) {
        const RedisTlsOptions& tls = *opts_.tls;
        conf << "port 0\n"
             << "tls-port " << port_ << "\n"
             << "tls-cert-file \"" << tls.cert_file << "\"\n"
             << "tls-key-file \"" << tls.key_file << "\"\n"
             << "tls-ca-cert-file \"" << tls.ca_cert_file << "\"\n"
             << "tls-auth-clients " << (tls.auth_clients ? "yes" : "no") << "\n";
    } else {
        conf << "port " << port_ << "\n";
    }
    conf << "dir \"" << dir_ << "\"\n"
         << "save \"\"\n"
         << "appendonly no\n"
         << "daemonize no\n"
         << "protected-mode no\n"
         << "logfile \"" << log_path_ << "\"\n"
         << "notify-keyspace-events " << (opts_.notify_expired ? "Ex" : "\"\"") << "\n";
    for (const auto& line : opts_.extra_config_lines) conf << line << "\n";
    conf.close();
    if (!conf) throw std::runtime_error("RedisServer: cannot write " + conf_path_);
}

bool RedisServer::is_ready(pid_t pid) const {
    return opts_.tls ? is_ready_tls(port_, pid, *opts_.tls) : is_ready_plain(port_, pid);
}

RedisServer::Launch RedisServer::launch() {
    const auto log_offset = file_size_or_zero(log_path_);
    child_.reset();
    child_ = std::make_unique<ChildProcess>(redis_server_binary(), std::vector<std::string>{conf_path_},
                                            std::vector<std::pair<std::string, std::string>>{},
                                            stdout_path_);
    const pid_t pid = child_->pid();
    const auto end = std::chrono::steady_clock::now() + kReadyDeadline;
    auto backoff = std::chrono::milliseconds(10);
    for (;;) {
        if (is_ready(pid)) return Launch::Ready;
        if (!child_->running()) {
            const std::string log = read_file(log_path_);
            const std::string fresh = log.size() > log_offset ? log.substr(log_offset) : std::string();
            if (fresh.find("Address already in use") != std::string::npos) return Launch::BindFailed;
            throw std::runtime_error(failure_report("redis-server exited during startup"));
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= end) {
            child_->kill_hard();
            throw std::runtime_error(
                failure_report("redis-server did not answer PING within 10 s"));
        }
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(backoff, end - now));
        backoff = std::min(backoff * 2, std::chrono::milliseconds(100));
    }
}

std::string RedisServer::failure_report(const std::string& what) const {
    std::string msg = "RedisServer(port " + std::to_string(port_) + ", dir " + dir_ + "): " + what;
    msg += "\n--- tail of redis.log ---\n" + tail_lines(read_file(log_path_), 30);
    msg += "\n--- tail of redis stdout/stderr ---\n" + tail_lines(read_file(stdout_path_), 30);
    return msg;
}

std::string RedisServer::url(int db) const {
    return (opts_.tls ? "rediss://" : "redis://") + host() + ":" + std::to_string(port_) + "/" +
           std::to_string(db);
}

pid_t RedisServer::pid() const { return child_ ? child_->pid() : -1; }

bool RedisServer::running() { return child_ && child_->running(); }

void RedisServer::stop() {
    if (!running()) return;
    if (opts_.tls) {
        child_->terminate(std::chrono::seconds(10));
        return;
    }
    auto wait = std::chrono::milliseconds(0);
    SyncConnection::Options options;
    options.connect_timeout = std::chrono::seconds(1);
    options.command_timeout = std::chrono::seconds(1);
    try {
        SyncConnection c(test_endpoint(kHost, port_), options);
        const auto sent = std::chrono::steady_clock::now();
        try {
            c.command({"SHUTDOWN", "NOSAVE"});  // a reply (e.g. NOAUTH) means it was refused
        } catch (const IoError&) {
            // Success means the server closed the connection without replying; no answer
            // within the command timeout means it may be going down, or may be wedged.
            const bool closed = std::chrono::steady_clock::now() - sent < options.command_timeout;
            wait = closed ? std::chrono::seconds(10) : std::chrono::seconds(1);
        }
    } catch (const std::exception&) {
        // cannot connect: fall through to SIGTERM
    }
    if (wait.count() > 0 && child_->wait_exit(wait)) return;
    child_->terminate(std::chrono::seconds(5));
}

void RedisServer::start() {
    if (running()) throw std::logic_error("RedisServer::start: server is already running");
    if (launch() != Launch::Ready)
        throw std::runtime_error(failure_report("redis-server could not bind its port again"));
}

void RedisServer::kill_hard() {
    if (child_) child_->kill_hard();
}

void RedisServer::replace_tls(RedisTlsOptions tls) {
    if (!opts_.tls) throw std::logic_error("RedisServer::replace_tls: the server is not in TLS mode");
    if (running()) throw std::logic_error("RedisServer::replace_tls: server is running");
    check_tls_options(tls);
    opts_.tls = std::move(tls);
    write_config();
}

std::string RedisServer::log() const { return read_file(log_path_); }

}  // namespace expiry::test
