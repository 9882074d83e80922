// SyncRedis: minimal blocking hiredis client for test assertions.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

struct redisContext;

namespace expiry::test {

// One blocking connection to a Redis server.
//
// Contracts:
// - All commands are sent as binary-safe argv vectors (no format strings).
// - I/O and protocol errors throw std::runtime_error; after one, the connection
//   is unusable and every later call throws too. Redis error replies are
//   returned as Reply values of Type::Error, except where stated otherwise.
// - The constructor's timeout bounds connecting only; commands block until the
//   server answers or the connection breaks.
// - Constructing a SyncRedis sets SIGPIPE to SIG_IGN for the whole process if it
//   is still SIG_DFL, so writing to a server that has gone away reports an
//   error instead of killing the test binary. (ChildProcess resets children to
//   the default disposition.)
// - Not thread-safe.
class SyncRedis {
public:
    struct Reply {
        enum class Type { Nil, Status, Error, Integer, String, Array } type = Type::Nil;
        std::string str;             // Status, Error, String
        long long integer = 0;       // Integer
        std::vector<Reply> elements; // Array
        bool is_error() const { return type == Type::Error; }
        // Human-readable rendering for test failure messages.
        std::string to_string() const;
    };

    // Connects (hiredis redisConnectWithTimeout); throws std::runtime_error on failure.
    SyncRedis(std::string host, int port,
              std::chrono::milliseconds timeout = std::chrono::seconds(2));
    ~SyncRedis();

    SyncRedis(const SyncRedis&) = delete;
    SyncRedis& operator=(const SyncRedis&) = delete;
    SyncRedis(SyncRedis&&) = delete;
    SyncRedis& operator=(SyncRedis&&) = delete;

    // Sends one command and returns its reply. Throws std::invalid_argument if
    // argv is empty.
    Reply command(const std::vector<std::string>& argv);

    // Like command(), but throws std::runtime_error unless the reply is an Integer.
    long long integer(const std::vector<std::string>& argv);

    // Sends all commands in one batch, then reads one reply per command.
    // If `out` is non-null it is replaced by the replies (in order), error
    // replies included. If `out` is null, any error reply throws
    // std::runtime_error (after all replies have been read). An empty command
    // throws std::invalid_argument before anything is sent.
    void pipeline(const std::vector<std::vector<std::string>>& cmds,
                  std::vector<Reply>* out = nullptr);

    // Every entry of `stream` in id order (XRANGE, pages of 10000). Each map
    // holds the entry's fields (for duplicate field names the last one wins)
    // plus "_entry_id" set to the entry id (overriding a field of that name).
    // A missing key yields an empty vector; an error reply throws.
    std::vector<std::map<std::string, std::string>> xrange_all(const std::string& stream);

private:
    [[noreturn]] void throw_io_error(const std::string& what) const;

    std::string host_;
    int port_;
    redisContext* ctx_ = nullptr;
};

}  // namespace expiry::test
