// The one blocking Redis client: one hiredis context, commands and pipelines, used by the CLI,
// order-sim, the benchmark and the tests. The only owner of a redisContext outside the async
// connection; all hiredis includes stay in the .cpp.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "config/redis_url.h"
#include "redis/reply.h"

struct redisContext;
struct ssl_st;

namespace expiry {

class TlsContext;

class SyncConnection {
 public:
  struct Options {
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds command_timeout{5000};  // longest wait for one reply
  };

  // Connects (with TLS for rediss://), then AUTHs (user + password, or password alone) and
  // SELECTs as the endpoint says. Throws IoError when Redis cannot be reached, ReplyError when
  // AUTH or SELECT is refused, TlsError (a ConfigError) when TLS does not fit the server.
  // Over TLS the handshake ends with a PING, so TLS refusals surface here: TlsError for a
  // definite cause (tls_context.h), and for a connection closed before any answer twice in a
  // row (a TLS 1.3 server refusing a missing client certificate); a TLS handshake that times
  // out is an IoError that names TLS. A plain-text connection closed before any answer (a
  // TLS-only port) is an IoError whose text suggests rediss://.
  // With endpoint.sentinel enabled, the master is found first (io/sync/sentinel_discovery.h:
  // UnknownMasterError, a ConfigError, for a name no sentinel knows; IoError when none can be
  // found) and endpoint() is then that master's.
  explicit SyncConnection(const RedisEndpoint& endpoint);
  SyncConnection(const RedisEndpoint& endpoint, Options options);
  ~SyncConnection();
  SyncConnection(const SyncConnection&) = delete;
  SyncConnection& operator=(const SyncConnection&) = delete;
  SyncConnection(SyncConnection&&) = delete;
  SyncConnection& operator=(SyncConnection&&) = delete;

  // Sends one binary-safe command and waits for its reply. Error replies are returned as
  // Reply::Type::Error; a broken connection or a timeout throws IoError, after which every
  // call throws IoError.
  Reply command(const std::vector<std::string>& argv);
  // Like command(), but throws ReplyError ("<COMMAND>: <error>") for an error reply.
  Reply checked(const std::vector<std::string>& argv);

  // Pipelining: append() buffers a command (nothing is sent yet); each read_reply() sends what
  // is buffered and returns the next reply in order. Same error contract as command().
  void append(const std::vector<std::string>& argv);
  Reply read_reply();
  // Sends everything appended so far without reading a reply, so Redis can work on it while
  // the caller prepares the next window. Same error contract as command().
  void flush();

  // A Redis Function library the client loads on demand: its source for FUNCTION LOAD REPLACE,
  // and the name a refused load gets in errors ("<load_name>: <error>").
  struct FunctionLibrary {
    std::string source;
    std::string load_name;
  };
  // expiry_v1; a refused load reads "FUNCTION LOAD: ..." (docs/security.md quotes it).
  static const FunctionLibrary& expiry_library();

  // FCALL (argv[0] is "FCALL") of a function of `library`: when the library is missing, loads
  // it (FUNCTION LOAD REPLACE) and retries once. Other error replies are returned. Throws
  // ReplyError if the load is refused or the server predates Redis 7.0.
  Reply fcall(const std::vector<std::string>& argv, const FunctionLibrary& library);
  // The same for the expiry_v1 library.
  Reply fcall(const std::vector<std::string>& argv);
  // FUNCTION LOAD REPLACE of `library` (default expiry_v1); returns the library name Redis
  // reports. Throws ReplyError as fcall() does.
  std::string load_library(const FunctionLibrary& library);
  std::string load_library();

  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  struct ContextDeleter {
    void operator()(redisContext* ctx) const;
  };

  void handshake();
  Reply receive();
  [[noreturn]] void fail_io();
  void check_usable(bool allow_pending) const;

  RedisEndpoint endpoint_;
  Options options_;
  std::shared_ptr<const TlsContext> tls_;  // rediss://
  std::unique_ptr<redisContext, ContextDeleter> ctx_;
  ssl_st* ssl_ = nullptr;      // ctx_'s TLS session (hiredis owns it), for failure messages
  bool answered_ = false;      // a reply has arrived on this connection
  size_t pending_ = 0;         // appended commands whose replies have not been read
  std::string broken_reason_;  // set once the connection is unusable
};

// Throws ReplyError for an error reply (with a hint for servers older than 7.0), naming `what`
// (e.g. "FCALL expiry_schedule"); for NOAUTH, AuthError with the message of
// handshake_refusal_message, which names no command. Returns `reply` otherwise.
const Reply& expect_ok(const Reply& reply, const std::string& what);

}  // namespace expiry
