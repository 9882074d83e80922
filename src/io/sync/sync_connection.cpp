// Blocking hiredis client behind SyncConnection; see sync_connection.h for the contracts.
#include "io/sync/sync_connection.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "base/errors.h"
#include "functions/function_library.h"
#include "io/hiredis_reply.h"
#include "io/sync/sentinel_discovery.h"
#include "io/tls_context.h"
#include "io/tls_probe.h"
#include "redis/handshake_refusal.h"
#include "redis/redis_error.h"

namespace expiry {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

struct ReplyDeleter {
  void operator()(void* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<void, ReplyDeleter>;

// The argv/argvlen arrays hiredis wants, pointing into `argv`.
struct ArgvView {
  explicit ArgvView(const std::vector<std::string>& argv) {
    if (argv.empty()) throw std::invalid_argument("empty Redis command");
    ptrs.reserve(argv.size());
    lens.reserve(argv.size());
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
  }
  int argc() const { return static_cast<int>(ptrs.size()); }
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
};

bool is_unknown_command(const Reply& r) {
  return classify(r) == RedisErrorKind::UnknownCommand;
}

[[noreturn]] void throw_too_old(const Reply& r) {
  throw ReplyError("Redis 7.0 or newer is required (this server does not know FUNCTION/FCALL): " + r.str);
}

// "SET", "FCALL expiry_schedule", "FUNCTION LOAD": how a command is named in messages.
std::string command_name(const std::vector<std::string>& argv) {
  std::string name;
  for (char c : argv.at(0)) name.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (argv.size() > 1 && (name == "FCALL" || name == "FCALL_RO" || name == "FUNCTION" || name == "XINFO")) {
    name += " " + argv[1];
  }
  return name;
}

}  // namespace

const Reply& expect_ok(const Reply& reply, const std::string& what) {
  if (reply.type != Reply::Type::Error && reply.type != Reply::Type::IoError) return reply;
  // A NOAUTH refuses the connection, not the command `what`: the message does not name it.
  if (classify(reply) == RedisErrorKind::NoAuth) throw AuthError(handshake_refusal_message("", reply));
  throw ReplyError(what + ": " + reply.str);
}

void SyncConnection::ContextDeleter::operator()(redisContext* ctx) const { redisFree(ctx); }

SyncConnection::SyncConnection(const RedisEndpoint& endpoint) : SyncConnection(endpoint, Options{}) {}

SyncConnection::SyncConnection(const RedisEndpoint& endpoint, Options options)
    : endpoint_(endpoint.sentinel.enabled()
                    ? SentinelDiscovery(endpoint, std::min(options.connect_timeout, std::chrono::milliseconds(1000)))
                          .find_master()
                    : endpoint),
      options_(options) {
  if (endpoint_.tls.enabled) tls_ = TlsContext::get(endpoint_.tls);  // throws TlsError
  const timeval connect_timeout = to_timeval(options_.connect_timeout);
  const timeval command_timeout = to_timeval(options_.command_timeout);
  redisOptions opts{};
  REDIS_OPTIONS_SET_TCP(&opts, endpoint_.host.c_str(), endpoint_.port);
  opts.connect_timeout = &connect_timeout;
  opts.command_timeout = &command_timeout;
  ctx_.reset(redisConnectWithOptions(&opts));
  if (!ctx_) throw IoError("cannot connect to " + endpoint_.redacted() + ": out of memory");
  if (ctx_->err != 0) throw IoError("cannot connect to " + endpoint_.redacted() + ": " + ctx_->errstr);
  if (tls_) {
    std::string why;
    bool definite = false;
    ssl_ = tls_->start(ctx_.get(), endpoint_.host, &why, &definite);
    if (ssl_ == nullptr) {
      if (!definite) {
        // A plain-text port never completes the handshake; a plain PING tells it from a fault.
        const auto budget = std::min(options_.connect_timeout, std::chrono::milliseconds(1000));
        if (auto cause = probe_port_speaks_plain_redis(endpoint_.host, endpoint_.port, budget)) {
          throw TlsError("cannot connect to " + endpoint_.redacted() + ": " + *cause);
        }
      }
      const std::string text = "cannot connect to " + endpoint_.redacted() + ": " + why;
      if (definite) throw TlsError(text);
      throw IoError(text);
    }
  }
  handshake();
}

SyncConnection::~SyncConnection() = default;

void SyncConnection::handshake() {
  answered_ = false;
  if (!endpoint_.password.empty()) {
    std::vector<std::string> auth{"AUTH"};
    if (!endpoint_.user.empty()) auth.push_back(endpoint_.user);
    auth.push_back(endpoint_.password);
    const Reply r = command(auth);
    if (r.type == Reply::Type::Error) {
      const std::string why = "authentication failed for " + endpoint_.redacted() + ": " + r.str;
      if (is_transient(classify(r))) throw ReplyError(why);  // LOADING, BUSY: try again later
      throw AuthError(why);
    }
  }
  if (endpoint_.db != 0) {
    const Reply r = command({"SELECT", std::to_string(endpoint_.db)});
    if (r.type == Reply::Type::Error) {
      throw ReplyError("cannot select database " + std::to_string(endpoint_.db) + " on " + endpoint_.redacted() +
                       ": " + r.str);
    }
  }
  // Over TLS, any answer (NOPERM included) proves the session, so a refusal that comes after
  // the TLS handshake (a missing client certificate) surfaces here, in the constructor, where
  // it can be told from a network fault. Plain text does no I/O before the first command.
  if (tls_ && !answered_) command({"PING"});
}

void SyncConnection::check_usable(bool allow_pending) const {
  if (!broken_reason_.empty()) throw IoError(broken_reason_);
  if (!allow_pending && pending_ != 0) {
    throw std::logic_error("SyncConnection::command while pipelined replies are unread");
  }
}

void SyncConnection::fail_io() {
  const bool timed_out =
      ctx_->err == REDIS_ERR_TIMEOUT ||
      (ctx_->err == REDIS_ERR_IO && std::string(ctx_->errstr).find("temporarily unavailable") != std::string::npos);
  if (timed_out) {
    broken_reason_ = "no reply from " + endpoint_.redacted() + " within " +
                     std::to_string(options_.command_timeout.count()) + " ms";
    if (tls_ && !TlsContext::handshake_finished(ssl_)) {
      broken_reason_ = "Redis connection to " + endpoint_.redacted() + " failed: " +
                       tls_->explain_timeout(std::to_string(options_.command_timeout.count()) + " ms");
      // A plain-text port never answers a ClientHello; a plain PING tells it from a hung server.
      const auto budget = std::min(options_.connect_timeout, std::chrono::milliseconds(1000));
      if (auto cause = probe_port_speaks_plain_redis(endpoint_.host, endpoint_.port, budget)) {
        broken_reason_ = "Redis connection to " + endpoint_.redacted() + " failed: " + *cause;
        throw TlsError(broken_reason_);
      }
    }
    throw IoError(broken_reason_);
  }
  const std::string why = ctx_->errstr[0] != '\0' ? std::string(ctx_->errstr) : std::string("connection closed");
  broken_reason_ = "Redis connection to " + endpoint_.redacted() + " failed: ";
  if (answered_) {
    broken_reason_ += why;
    throw IoError(broken_reason_);
  }
  // Before the first answer: TLS that does not fit the server (a TLS 1.3 server refuses a
  // client certificate only after the handshake), plain text that a TLS port drops, or a network
  // fault. A short probe (tls_probe.h) tells the setup from the fault.
  const auto budget = std::min(options_.connect_timeout, std::chrono::milliseconds(1000));
  if (tls_) {
    bool definite = false;
    broken_reason_ += tls_->explain_failure(ssl_, endpoint_.host, why, false, &definite);
    if (!definite) {
      const bool handshaken = TlsContext::handshake_finished(ssl_);
      auto cause = handshaken ? probe_tls_refusal(*tls_, endpoint_.host, endpoint_.port, budget)
                              : probe_port_speaks_plain_redis(endpoint_.host, endpoint_.port, budget);
      if (cause) {
        broken_reason_ = "Redis connection to " + endpoint_.redacted() + " failed: " + *cause;
        definite = true;
      }
    }
    if (definite) throw TlsError(broken_reason_);
    throw IoError(broken_reason_);
  }
  const bool closed = ctx_->err == REDIS_ERR_EOF || why.find("reset by peer") != std::string::npos;
  if (!closed) {
    broken_reason_ += why;
    throw IoError(broken_reason_);
  }
  if (auto cause = probe_port_speaks_tls(endpoint_.host, endpoint_.port, budget)) {
    broken_reason_ += why + " (" + *cause + ")";
    throw TlsError(broken_reason_);
  }
  // A maxclients refusal whose reply a reset discarded, or a fault: the hint, and retry.
  broken_reason_ += why + plain_text_hint(false);
  throw IoError(broken_reason_);
}

Reply SyncConnection::command(const std::vector<std::string>& argv) {
  check_usable(false);
  ArgvView view(argv);
  ReplyPtr reply(redisCommandArgv(ctx_.get(), view.argc(), view.ptrs.data(), view.lens.data()));
  if (!reply) fail_io();
  answered_ = true;
  return reply_from_hiredis(static_cast<redisReply*>(reply.get()));
}

Reply SyncConnection::checked(const std::vector<std::string>& argv) {
  Reply r = command(argv);
  expect_ok(r, command_name(argv));
  return r;
}

void SyncConnection::append(const std::vector<std::string>& argv) {
  check_usable(true);
  ArgvView view(argv);
  if (redisAppendCommandArgv(ctx_.get(), view.argc(), view.ptrs.data(), view.lens.data()) != REDIS_OK) fail_io();
  ++pending_;
}

Reply SyncConnection::read_reply() {
  check_usable(true);
  if (pending_ == 0) throw std::logic_error("SyncConnection::read_reply without an appended command");
  return receive();
}

void SyncConnection::flush() {
  check_usable(true);
  for (int done = 0; done == 0;) {
    if (redisBufferWrite(ctx_.get(), &done) != REDIS_OK) fail_io();
  }
}

Reply SyncConnection::receive() {
  void* raw = nullptr;
  if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) fail_io();
  ReplyPtr reply(raw);
  answered_ = true;
  --pending_;
  return reply_from_hiredis(static_cast<redisReply*>(reply.get()));
}

const SyncConnection::FunctionLibrary& SyncConnection::expiry_library() {
  static const FunctionLibrary library{function_library_source(), "FUNCTION LOAD"};
  return library;
}

Reply SyncConnection::fcall(const std::vector<std::string>& argv, const FunctionLibrary& library) {
  Reply r = command(argv);
  if (is_function_missing(r)) {
    load_library(library);
    r = command(argv);
  }
  if (is_unknown_command(r)) throw_too_old(r);
  return r;
}

Reply SyncConnection::fcall(const std::vector<std::string>& argv) { return fcall(argv, expiry_library()); }

std::string SyncConnection::load_library(const FunctionLibrary& library) {
  const Reply r = command({"FUNCTION", "LOAD", "REPLACE", library.source});
  if (is_unknown_command(r)) throw_too_old(r);
  expect_ok(r, library.load_name);
  return r.str;
}

std::string SyncConnection::load_library() { return load_library(expiry_library()); }

}  // namespace expiry
