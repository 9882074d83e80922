// Test helpers over the product's blocking client (io/sync/SyncConnection): connecting to a
// test server, integer replies, pipelines and whole-stream reads for assertions.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "io/sync/sync_connection.h"
#include "redis/reply.h"

namespace expiry::test {

// Contracts of a test connection:
// - It is a SyncConnection: error replies come back as Reply::Type::Error; a broken connection
//   or a reply slower than 60 s throws IoError (a std::runtime_error), and every later call
//   throws too.
// - Connecting sets SIGPIPE to SIG_IGN for the whole process if it is still SIG_DFL, so writing
//   to a server that has gone away reports an error instead of killing the test binary.
//   (ChildProcess resets children to the default disposition.)
RedisEndpoint test_endpoint(const std::string& host, int port);
SyncConnection::Options test_connection_options();
std::unique_ptr<SyncConnection> connect_redis(const std::string& host, int port);

// A SyncConnection that sets up the test contracts above when constructed; use it where a test
// holds a connection by value.
class TestConnection : public SyncConnection {
public:
    TestConnection(const std::string& host, int port);
};

// The reply to `argv`; throws std::runtime_error unless it is an Integer.
long long integer(SyncConnection& redis, const std::vector<std::string>& argv);

// Sends all commands in one batch, then reads one reply per command. If `out` is non-null it is
// replaced by the replies (in order), error replies included. If `out` is null, any error reply
// throws std::runtime_error (after all replies have been read). An empty command throws
// std::invalid_argument before anything is sent.
void pipeline(SyncConnection& redis, const std::vector<std::vector<std::string>>& cmds,
              std::vector<Reply>* out = nullptr);

// Every entry of `stream` in id order (XRANGE, pages of 10000). Each map holds the entry's
// fields (for duplicate field names the last one wins) plus "_entry_id" set to the entry id
// (overriding a field of that name). A missing key yields an empty vector; an error reply throws.
std::vector<std::map<std::string, std::string>> xrange_all(SyncConnection& redis, const std::string& stream);

// Every message published on `channel` while `action` ran, in order: a subscriber on
// host:port reads up to a marker that `publisher` publishes after `action`. (The blocking client
// reads one reply per command it sent, so each read follows a PING, whose reply comes after the
// messages before it.)
std::vector<std::string> channel_messages(const std::string& host, int port, SyncConnection& publisher,
                                          const std::string& channel, const std::function<void()>& action);

}  // namespace expiry::test
