// RedisServer: a private, throwaway redis-server process for one test.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/child_process.h"

namespace expiry::test {

// The last `max_lines` lines of `text` (for failure reports with a log's tail).
std::string tail_lines(const std::string& text, size_t max_lines);

// TLS mode of a RedisServer: the files redis-server serves TLS with, and the client certificate
// the fixture's own probes present. All paths are PEM files that must outlive the server (e.g. a
// TlsCerts).
struct RedisTlsOptions {
    std::string cert_file;      // tls-cert-file: the server's certificate
    std::string key_file;       // tls-key-file: its private key
    std::string ca_cert_file;   // tls-ca-cert-file: verifies client certificates
    bool auth_clients = false;  // tls-auth-clients yes|no
    // The certificate and key the fixture's readiness probe presents; required when auth_clients.
    std::string probe_cert_file;
    std::string probe_key_file;
};

// Runs redis-server (redis_server_binary(): /usr/bin/redis-server unless EXPIRY_TEST_REDIS_SERVER
// says otherwise, support/server_binaries.h) on 127.0.0.1 with its own temp dir and port.
//
// Contracts:
// - The temp dir (mkdtemp under /tmp) holds redis.conf, redis.log (the server's
//   logfile) and redis.stdout.log (its stdout/stderr, e.g. config errors). It
//   is removed recursively by the destructor.
// - The config has no persistence (save "", appendonly no) unless
//   extra_config_lines (appended last, so they win) say otherwise.
// - "Ready" means PING answers PONG from the server process this object
//   started (its INFO process_id is checked, so a foreign server that grabbed
//   the port is never mistaken for ours). If extra_config_lines set
//   requirepass, a NOAUTH answer counts as ready and identity is not checked;
//   stop() then falls back to SIGTERM because SHUTDOWN is refused.
// - The constructor and start() return only once the server is ready, and
//   throw std::runtime_error (with the log tail) if it is not ready within 10 s.
// - TLS mode (Options::tls set): the server listens on a TLS port only (`port 0`, `tls-port`
//   the picked port); port() is that port and url() a rediss:// URL. Readiness is then probed
//   with redis-cli (redis_cli_binary()) --tls --insecure (PING, then INFO's process_id), independent of the
//   product's TLS code: the probe checks who answers, not the certificate, so a server started
//   with a certificate that clients must refuse still becomes ready. stop() sends SIGTERM (which
//   Redis handles like SHUTDOWN; it saves only if extra_config_lines configured save points).
//   TLS options without cert, key or CA file, or auth_clients without the probe's certificate
//   and key, throw std::invalid_argument (from the constructor and replace_tls).
// - Not thread-safe.
class RedisServer {
public:
    struct Options {
        // Raw redis.conf lines appended after the generated ones. Must not
        // change bind, port, dir, logfile or daemonize (the object relies on them).
        std::vector<std::string> extra_config_lines;
        bool notify_expired = true;  // notify-keyspace-events "Ex" (else "")
        std::optional<RedisTlsOptions> tls;  // set: TLS mode (see above)
    };

    // Picks a free loopback port (retrying with a new port, up to 5 attempts,
    // when redis cannot bind it), writes redis.conf and starts the server.
    // (Two overloads instead of `Options opts = {}`: GCC rejects a default
    // argument of a nested type with member initializers inside the class.)
    RedisServer();
    explicit RedisServer(Options opts);

    // Stops the server if it is running and removes the temp dir.
    ~RedisServer();

    RedisServer(const RedisServer&) = delete;
    RedisServer& operator=(const RedisServer&) = delete;
    RedisServer(RedisServer&&) = delete;
    RedisServer& operator=(RedisServer&&) = delete;

    int port() const { return port_; }
    std::string host() const { return "127.0.0.1"; }
    // "redis://127.0.0.1:<port>/<db>" ("rediss://..." in TLS mode); the db is always included.
    std::string url(int db = 0) const;
    bool tls() const { return opts_.tls.has_value(); }
    std::string dir() const { return dir_; }
    // Pid of the current (or most recent) server process.
    pid_t pid() const;

    // SHUTDOWN NOSAVE, then waits for the process to exit; falls back to
    // SIGTERM/SIGKILL if that does not work. No-op if not running.
    void stop();
    // Starts the server again with the same config, dir and port and waits
    // until it is ready. Throws std::logic_error if it is already running.
    void start();
    // SIGKILL + reap (simulates a crash). No-op if not running.
    void kill_hard();
    bool running();
    // TLS mode only: serve `tls` from the next start() on (same port), e.g. a certificate that
    // clients no longer accept. Throws std::logic_error if the server is running or not in TLS
    // mode.
    void replace_tls(RedisTlsOptions tls);

    // Contents of redis.log.
    std::string log() const;

private:
    enum class Launch { Ready, BindFailed };
    Launch launch();
    void write_config() const;
    bool is_ready(pid_t pid) const;
    std::string failure_report(const std::string& what) const;

    std::string dir_;
    std::string conf_path_;
    std::string log_path_;
    std::string stdout_path_;
    int port_ = 0;
    Options opts_;
    std::unique_ptr<ChildProcess> child_;
};

}  // namespace expiry::test
