// hiredis 1.x async + libevent behind RedisConnection; see redis_connection.h for the contracts.
// hiredis rules followed here: never free or reconnect inside a hiredis callback (deferred via
// the loop instead); hiredis frees the context itself after the connect-failure and disconnect
// callbacks, so ctx_ is nulled there; a NULL reply means the context is dying. hiredis times
// out the TCP connect itself (redisOptions::connect_timeout); our handshake timer covers the
// rest (TLS, AUTH, SELECT, PING), with the same budget.
#include "io/redis_connection.h"

#include <hiredis/adapters/libevent.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "io/callback_barrier.h"
#include "io/hiredis_reply.h"
#include "io/sentinel_resolver.h"
#include "io/sentinel_watch.h"
#include "io/tls_context.h"
#include "io/tls_probe.h"
#include "redis/redis_error.h"
#include "redis/sentinel_reply.h"

namespace expiry {

namespace {

// The single place that turns a hiredis context error into text.
std::string context_error(const redisAsyncContext* ac) {
  if (ac == nullptr) return "out of memory";
  const char* hint = ac->err == REDIS_ERR_PROTOCOL || ac->c.err == REDIS_ERR_PROTOCOL
                         ? " (the peer does not speak Redis: check the host and port of redis_url)"
                         : "";
  if (ac->err != 0 && ac->errstr != nullptr && ac->errstr[0] != '\0') return ac->errstr + std::string(hint);
  if (ac->c.err != 0 && ac->c.errstr[0] != '\0') return ac->c.errstr + std::string(hint);
  return "connection closed by the server";
}

}  // namespace

// Marks one of this connection's callbacks as running, so that destroying the connection from
// inside it is caught (the destructor aborts) instead of becoming a use-after-free.
class RedisConnection::CallbackScope {
 public:
  explicit CallbackScope(RedisConnection& conn) : conn_(conn) { ++conn_.in_callback_; }
  ~CallbackScope() { --conn_.in_callback_; }
  CallbackScope(const CallbackScope&) = delete;
  CallbackScope& operator=(const CallbackScope&) = delete;

 private:
  RedisConnection& conn_;
};

template <class Fn>
void RedisConnection::run_own(Fn&& fn) {
  CallbackScope scope(*this);
  std::forward<Fn>(fn)();
}

struct RedisConnection::Pending {
  RedisConnection* conn;
  ReplyCallback cb;
};

struct RedisConnection::Subscription {
  RedisConnection* conn;
  ReplyCallback cb;
};

RedisConnection::RedisConnection(EventLoop& loop, Options options)
    : loop_(loop),
      options_(std::move(options)),
      target_(options_.endpoint),
      reply_callback_who_("redis " + options_.role + ": reply callback"),
      rng_(std::random_device{}()),
      handshake_timer_(loop, [this] { run_own([this] { attempt_failed_timeout(); }); }),
      retry_timer_(loop, [this] { run_own([this] { connect_now(); }); }),
      watchdog_timer_(loop, [this] { run_own([this] { watchdog_tick(); }); }) {}

RedisConnection::~RedisConnection() {
  if (in_callback_ > 0) {
    // Destroying the connection from inside its own callback: the code that called it still
    // uses `this` (and hiredis its context) after the callback returns.
    std::fprintf(stderr,
                 "fatal: RedisConnection (%s) destroyed from inside its own callback; destroy it from "
                 "on_closed or from deferred work instead\n",
                 options_.role.c_str());
    std::abort();
  }
  if (watch_) watch_->leave(this);
  state_ = State::Closed;
  on_ready_ = nullptr;
  on_down_ = nullptr;
  on_handshake_error_ = nullptr;
  on_closed_ = nullptr;
  if (ctx_ != nullptr) {
    redisAsyncContext* ac = ctx_;
    ctx_ = nullptr;
    discard_callbacks_ = true;
    redisAsyncFree(ac);
  }
}

void RedisConnection::start() {
  if (options_.endpoint.sentinel.enabled() && !watch_) {
    watch_ = SentinelWatch::join(loop_, options_.endpoint, options_.connect_timeout, options_.backoff, this);
  }
  if (state_ == State::Disconnected && ctx_ == nullptr && !retry_timer_.armed() && !resolving_) connect_now();
}

void RedisConnection::connect_now() {
  if (state_ == State::Closing || state_ == State::Closed) return;
  subscriptions_.clear();  // the context they belonged to has been freed
  if (held_until_) {
    const auto now = Clock::now();
    if (now < *held_until_) {
      // A failover is under way: try again soon, without counting a failure.
      retry_timer_.arm(std::chrono::duration_cast<std::chrono::microseconds>(
          std::min<Clock::duration>(*held_until_ - now, std::chrono::milliseconds(100))));
      return;
    }
    held_until_.reset();
  }
  if (target_.sentinel.enabled()) {
    if (resolving_) return;
    resolving_ = true;
    watch_->lookup(alive_, [this](const MasterLookup& lookup) { run_own([&] { on_master_lookup(lookup); }); });
    return;
  }
  connect_to_target();
}

void RedisConnection::on_master_lookup(const MasterLookup& lookup) {
  resolving_ = false;
  if (state_ != State::Disconnected || ctx_ != nullptr) return;  // closed, or connected meanwhile
  if (held_until_ && Clock::now() < *held_until_) {
    connect_now();  // arms the retry of a held connection
    return;
  }
  switch (lookup.outcome) {
    case MasterLookup::Outcome::FailoverInProgress:
      // Not a failure: wait for the switch without growing the backoff.
      if (!failover_logged_) spdlog::warn("redis {}: {}", options_.role, lookup.why);
      failover_logged_ = true;
      retry_timer_.arm(std::chrono::milliseconds(100));
      return;
    case MasterLookup::Outcome::Refused:
      // Retrying cannot cure it: the owner decides (at start, the services exit 2).
      attempt_failed(lookup.why);
      loop_.defer(alive_, [this, why = lookup.why] {
        run_own([&] {
          if (on_handshake_error_) on_handshake_error_(Reply::io_error(why));
        });
      });
      return;
    case MasterLookup::Outcome::Failed:
      attempt_failed(lookup.why);  // the sentinels or the master are down: retried
      return;
    case MasterLookup::Outcome::Found:
      break;
  }
  failover_logged_ = false;
  if (lookup.master.host != target_.host || lookup.master.port != target_.port) {
    spdlog::info("redis {}: the sentinels name {}:{} as master {}", options_.role, lookup.master.host,
                 lookup.master.port, lookup.master.sentinel.master);
  }
  target_ = lookup.master;
  resolved_ = true;
  connect_to_target();
}

void RedisConnection::connect_to_target() {
  const auto& ep = target_;
  if (ep.tls.enabled && !tls_) {
    try {
      tls_ = TlsContext::get(ep.tls);
    } catch (const std::exception& e) {
      attempt_failed(e.what());  // e.g. a CA file removed since start: retried like any failure
      return;
    }
  }
  redisOptions opts{};
  REDIS_OPTIONS_SET_TCP(&opts, ep.host.c_str(), ep.port);
  const auto ms = options_.connect_timeout.count();
  const timeval connect_timeout{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  opts.connect_timeout = &connect_timeout;
  redisAsyncContext* ac = redisAsyncConnectWithOptions(&opts);
  if (ac == nullptr || ac->err != 0) {
    const std::string why = context_error(ac);
    if (ac != nullptr) redisAsyncFree(ac);
    attempt_failed(why);
    return;
  }
  ssl_ = nullptr;
  if (tls_) {
    std::string why;
    ssl_ = tls_->start(&ac->c, ep.host, &why);
    if (ssl_ == nullptr) {
      redisAsyncFree(ac);
      attempt_failed(why);
      return;
    }
  }
  ac->data = this;
  if (redisLibeventAttach(ac, loop_.raw()) != REDIS_OK) {
    redisAsyncFree(ac);
    attempt_failed("cannot attach to the event loop");
    return;
  }
  redisAsyncSetConnectCallback(ac, &RedisConnection::on_connect);
  redisAsyncSetDisconnectCallback(ac, &RedisConnection::on_disconnect);
  ctx_ = ac;
  sent_at_.clear();
  state_ = State::Connecting;
  dying_ = false;
  was_ready_ = false;
  handshake_failed_ = false;
  ++attempt_;
}

void RedisConnection::on_connect(const redisAsyncContext* ac, int status) {
  auto* self = static_cast<RedisConnection*>(ac->data);
  if (self == nullptr || ac != self->ctx_) return;
  CallbackScope scope(*self);
  if (status != REDIS_OK) {
    // hiredis frees the context after this callback returns.
    bool tls_refusal = false;
    const std::string why =
        ac->c.err == REDIS_ERR_TIMEOUT ? self->connect_timeout_text() : self->failure_text(ac, &tls_refusal);
    self->ctx_ = nullptr;
    self->ssl_ = nullptr;
    if (tls_refusal) {
      self->attempt_refused_by_tls(why);
    } else {
      self->attempt_failed(why);
    }
    return;
  }
  self->begin_handshake();
}

std::string RedisConnection::connect_timeout_text() const {
  return "connect timeout after " + std::to_string(options_.connect_timeout.count()) + " ms";
}

std::string RedisConnection::failure_text(const redisAsyncContext* ac, bool* tls_refusal) {
  const std::string why = context_error(ac);
  if (was_ready_) return tls_ ? tls_->explain_failure(ssl_, target_.host, why, true) : why;
  const auto& ep = target_;
  bool definite = false;
  std::string explained;
  // Closed before any answer: a network fault, or a setup the server refuses. Before the first
  // Ready a short probe tells which (it blocks the loop for at most a few budgets, only then).
  const auto budget = std::min(options_.connect_timeout, std::chrono::milliseconds(1000));
  if (tls_) {
    explained = tls_->explain_failure(ssl_, ep.host, why, false, &definite);
    if (!definite && !ever_ready_) {
      const bool handshaken = TlsContext::handshake_finished(ssl_);
      auto cause = handshaken ? probe_tls_refusal(*tls_, ep.host, ep.port, budget)
                              : probe_port_speaks_plain_redis(ep.host, ep.port, budget);
      if (cause) {
        explained = *cause;
        definite = true;
      }
    }
  } else {
    const bool unanswered = ac->c.err == REDIS_ERR_EOF || why.find("reset by peer") != std::string::npos;
    explained = unanswered ? why + plain_text_hint(false) : why;
    if (unanswered && !ever_ready_) {
      if (auto cause = probe_port_speaks_tls(ep.host, ep.port, budget)) {
        explained = why + " (" + *cause + ")";
        definite = true;
      }
    }
  }
  *tls_refusal = definite;
  return explained;
}

void RedisConnection::attempt_refused_by_tls(const std::string& why) {
  attempt_failed(why);
  if (on_handshake_error_) on_handshake_error_(Reply::io_error(why));
}

void RedisConnection::begin_handshake() {
  handshake_timer_.arm(options_.connect_timeout);
  const auto& ep = target_;
  std::vector<std::pair<std::string, std::vector<std::string>>> steps;
  if (!ep.password.empty()) {
    if (ep.user.empty()) {
      steps.push_back({"AUTH", {"AUTH", ep.password}});
    } else {
      steps.push_back({"AUTH", {"AUTH", ep.user, ep.password}});
    }
  }
  if (ep.db != 0) steps.push_back({"SELECT", {"SELECT", std::to_string(ep.db)}});
  if (!options_.client_name.empty()) {
    steps.push_back({"CLIENT SETNAME", {"CLIENT", "SETNAME", options_.client_name}});
  }
  // Through Sentinel: the node must still be the master (a demoted one answers "slave").
  if (ep.sentinel.enabled()) steps.push_back({"ROLE", {"ROLE"}});
  // Always last: proves the peer speaks Redis and lets us in, whatever the steps before it.
  steps.push_back({"PING", {"PING"}});
  handshake_left_ = steps.size();
  handshake_failed_ = false;
  for (auto& [name, argv] : steps) {
    const std::string step = name;
    send(argv, [this, step, attempt = attempt_](const Reply& r) { handshake_step_done(r, step, attempt); });
  }
}

void RedisConnection::handshake_step_done(const Reply& reply, const std::string& step, uint64_t attempt) {
  if (state_ != State::Connecting || attempt != attempt_ || handshake_failed_) return;
  const RedisErrorKind kind = classify(reply);
  if (kind == RedisErrorKind::Io) {
    handshake_failed_ = true;  // on_disconnect (or the handshake timer) follows and retries
    return;
  }
  if (kind != RedisErrorKind::None) {
    const bool setname_not_granted =
        (step == "CLIENT SETNAME" || step == "ROLE") &&
        (kind == RedisErrorKind::NoPermission || kind == RedisErrorKind::UnknownCommand);
    // A server loading its data (or running a long script) is Redis and lets us in; the
    // owner's own commands meet the same state and retry. NOPERM: an ACL user without +ping
    // is logged in, and PING is not a permission the services need.
    const bool answered_as_redis =
        step == "PING" && (kind == RedisErrorKind::Loading || kind == RedisErrorKind::Busy ||
                           kind == RedisErrorKind::MasterDown || kind == RedisErrorKind::NoPermission);
    if (setname_not_granted) {
      spdlog::debug("redis {}: {} failed, ignored: {}", options_.role, step, reply.str);
    } else if (!answered_as_redis) {
      handshake_refused(step, reply);
      return;
    }
  } else if (step == "ROLE" && role_of(reply) != "master") {
    handshake_refused(step, Reply::io_error(target_.host + ":" + std::to_string(target_.port) + " answers ROLE \"" +
                                            role_of(reply) + "\", not master: asking the sentinels again"));
    return;
  } else if (step == "PING" && !(reply.type == Reply::Type::Status && reply.str == "PONG")) {
    handshake_refused(step, Reply::io_error("unexpected PING reply " + reply.describe() + ": is this a Redis server?"));
    return;
  }
  if (--handshake_left_ == 0) become_ready();
}

void RedisConnection::handshake_refused(const std::string& step, const Reply& reply) {
  handshake_failed_ = true;
  const RedisErrorKind kind = classify(reply);
  const bool permanent =
      is_auth_refusal(kind) || (step == "SELECT" && kind != RedisErrorKind::Io && !is_transient(kind));
  // A NOAUTH answers whichever step came first (SELECT, CLIENT SETNAME, PING): it refuses the
  // connection, not the step, so the step is not named.
  const std::string refused = (kind == RedisErrorKind::NoAuth ? std::string("no password given, refused")
                                                               : step + " refused") + ": " + reply.str;
  if (permanent && on_handshake_error_) {
    // Said here: an owner that gives up closes the connection, so no retry line follows.
    spdlog::error("redis {} connection to {}: {}", options_.role, target_described(), refused);
    on_handshake_error_(reply);
  }
  force_reconnect(refused);
}

void RedisConnection::become_ready() {
  handshake_timer_.cancel();
  state_ = State::Ready;
  was_ready_ = true;
  ready_since_ = Clock::now();
  last_activity_ = ready_since_;
  if (ever_ready_) ++reconnects_;
  ever_ready_ = true;
  spdlog::info("redis {} connection ready ({})", options_.role, target_.redacted());
  watchdog_timer_.arm(options_.watchdog_interval);
  if (on_ready_) on_ready_();
}

void RedisConnection::on_disconnect(const redisAsyncContext* ac, int status) {
  auto* self = static_cast<RedisConnection*>(ac->data);
  if (self == nullptr || ac != self->ctx_) return;  // a context we abandoned ourselves
  CallbackScope scope(*self);
  // hiredis frees the context after this callback returns.
  bool tls_refusal = false;
  const std::string why = status == REDIS_OK ? "disconnected" : self->failure_text(ac, &tls_refusal);
  self->ctx_ = nullptr;
  self->ssl_ = nullptr;
  self->dying_ = false;
  self->handshake_timer_.cancel();
  self->watchdog_timer_.cancel();
  if (self->state_ == State::Closing || self->state_ == State::Closed) {
    self->state_ = State::Closed;
    if (self->on_closed_) self->loop_.defer(self->alive_, self->on_closed_);
    return;
  }
  const bool was_ready = self->was_ready_;
  self->state_ = State::Disconnected;
  if (was_ready) {
    self->schedule_retry_after_loss(why);
  } else if (tls_refusal) {
    self->attempt_refused_by_tls(why);
  } else {
    self->attempt_failed(why);
  }
}

void RedisConnection::schedule_retry_after_loss(const std::string& why) {
  if (Clock::now() - ready_since_ >= options_.stable_after) failures_ = 0;
  const auto delay = backoff_delay(options_.backoff, failures_++, std::uniform_real_distribution<double>(0, 1)(rng_));
  spdlog::warn("redis {} connection lost: {}; reconnecting in {} ms", options_.role, why, delay.count());
  retry_timer_.arm(delay);
  if (on_down_) on_down_(why);
}

void RedisConnection::attempt_failed_timeout() {
  if (!tls_ || TlsContext::handshake_finished(ssl_)) {
    drop_now(connect_timeout_text());
    return;
  }
  // A TLS client that a plain-text port never answers (it waits for the end of a "command"),
  // or a hung server. Before the first Ready a plain PING tells them apart: a port that answers
  // it in plain text is a setup retrying cannot cure (the owner decides: at start, exit 2), like
  // a plain client on a TLS port; anything else is retried like any timeout, with TLS named.
  if (!ever_ready_) {
    const auto budget = std::min(options_.connect_timeout, std::chrono::milliseconds(1000));
    if (auto cause = probe_port_speaks_plain_redis(target_.host, target_.port, budget)) {
      const std::string why = *cause;
      drop_now(why);
      if (on_handshake_error_) on_handshake_error_(Reply::io_error(why));
      return;
    }
  }
  drop_now(tls_->explain_timeout(std::to_string(options_.connect_timeout.count()) + " ms"));
}

std::string RedisConnection::target_described() const {
  return target_.sentinel.enabled() && !resolved_ ? target_.where() : target_.redacted();
}

void RedisConnection::attempt_failed(const std::string& why) {
  handshake_timer_.cancel();
  state_ = State::Disconnected;
  const auto delay = backoff_delay(options_.backoff, failures_++, std::uniform_real_distribution<double>(0, 1)(rng_));
  spdlog::warn("redis {} connection to {} failed: {}; retrying in {} ms", options_.role,
               target_described(), why, delay.count());
  retry_timer_.arm(delay);
}

void RedisConnection::drop_now(const std::string& why) {
  if (ctx_ == nullptr || state_ == State::Closed) return;
  redisAsyncContext* ac = ctx_;
  const bool was_ready = was_ready_;
  ctx_ = nullptr;
  ssl_ = nullptr;
  dying_ = false;
  handshake_timer_.cancel();
  watchdog_timer_.cancel();
  if (state_ == State::Closing) {
    state_ = State::Closed;
    redisAsyncFree(ac);  // pending callbacks get IoError; on_disconnect ignores the abandoned context
    if (on_closed_) loop_.defer(alive_, on_closed_);
    return;
  }
  state_ = State::Disconnected;
  redisAsyncFree(ac);
  subscriptions_.clear();
  if (was_ready) {
    schedule_retry_after_loss(why);
  } else {
    attempt_failed(why);
  }
}

void RedisConnection::force_reconnect(std::string why) {
  loop_.defer(alive_, [this, why = std::move(why)] {
    run_own([&] {
      if (state_ == State::Ready || state_ == State::Connecting) drop_now(why);
    });
  });
}

void RedisConnection::follow_master(const std::string& host, int port) {
  if (!target_.sentinel.enabled() || state_ == State::Closing || state_ == State::Closed) return;
  const bool was_held = held_until_.has_value();
  held_until_.reset();
  if (state_ == State::Disconnected) {
    if (was_held) retry_timer_.arm(std::chrono::milliseconds(0));  // the attempt asks the sentinels
    return;
  }
  if (host == target_.host && port == target_.port) return;
  force_reconnect("the sentinels moved master " + target_.sentinel.master + " to " + host + ":" +
                  std::to_string(port));
}

void RedisConnection::check_master(const std::string& host, int port) {
  if (!target_.sentinel.enabled() || held_until_) return;
  if (state_ != State::Ready && state_ != State::Connecting) return;
  if (host == target_.host && port == target_.port) return;
  force_reconnect("the sentinels name " + host + ":" + std::to_string(port) + " as master " +
                  target_.sentinel.master + ", not " + target_.host + ":" + std::to_string(target_.port));
}

void RedisConnection::hold(std::chrono::milliseconds max, const std::string& why) {
  if (!target_.sentinel.enabled() || state_ == State::Closing || state_ == State::Closed) return;
  held_until_ = Clock::now() + max;
  force_reconnect(why);
}

void RedisConnection::release_hold() {
  if (!held_until_) return;
  held_until_.reset();
  if (state_ == State::Disconnected) retry_timer_.arm(std::chrono::milliseconds(0));
}

void RedisConnection::close() {
  if (state_ == State::Closing || state_ == State::Closed) return;
  retry_timer_.cancel();
  handshake_timer_.cancel();
  watchdog_timer_.cancel();
  if (ctx_ == nullptr) {
    state_ = State::Closed;
    if (on_closed_) loop_.defer(alive_, on_closed_);
    return;
  }
  const bool connected = state_ == State::Ready;
  state_ = State::Closing;
  loop_.defer(alive_, [this, connected] {
    run_own([&] {
      if (ctx_ == nullptr) return;
      if (connected) {
        redisAsyncDisconnect(ctx_);  // after pending replies; on_disconnect completes the close
      } else {
        drop_now("closing");
      }
    });
  });
}

bool RedisConnection::send(const std::vector<std::string>& argv, ReplyCallback cb) {
  constexpr size_t kStackArgs = 16;
  const char* stack_argv[kStackArgs];
  size_t stack_lens[kStackArgs];
  std::vector<const char*> heap_argv;
  std::vector<size_t> heap_lens;
  const char** av = stack_argv;
  size_t* lens = stack_lens;
  if (argv.size() > kStackArgs) {
    heap_argv.resize(argv.size());
    heap_lens.resize(argv.size());
    av = heap_argv.data();
    lens = heap_lens.data();
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    av[i] = argv[i].data();
    lens[i] = argv[i].size();
  }
  auto* pending = new Pending{this, std::move(cb)};
  if (redisAsyncCommandArgv(ctx_, &RedisConnection::on_reply, pending, static_cast<int>(argv.size()), av, lens) !=
      REDIS_OK) {
    ReplyCallback failed = std::move(pending->cb);
    delete pending;
    loop_.defer(alive_, [this, failed] { run_own([&] { deliver(failed, Reply::io_error("connection is closing")); }); });
    return false;
  }
  ++inflight_;
  sent_at_.push_back(Clock::now());
  return true;
}

void RedisConnection::command(const std::vector<std::string>& argv, ReplyCallback cb) {
  if (!ready() || ctx_ == nullptr) {
    loop_.defer(alive_, [this, cb = std::move(cb)] { run_own([&] { deliver(cb, Reply::io_error("not connected")); }); });
    return;
  }
  send(argv, std::move(cb));
}

void RedisConnection::subscribe(const std::vector<std::string>& argv, ReplyCallback on_message) {
  if (!ready() || ctx_ == nullptr) return;  // the owner subscribes again from on_ready
  std::vector<const char*> av;
  std::vector<size_t> lens;
  for (const auto& a : argv) {
    av.push_back(a.data());
    lens.push_back(a.size());
  }
  subscriptions_.push_back(std::make_unique<Subscription>(Subscription{this, std::move(on_message)}));
  if (redisAsyncCommandArgv(ctx_, &RedisConnection::on_subscription_reply, subscriptions_.back().get(),
                            static_cast<int>(av.size()), av.data(), lens.data()) != REDIS_OK) {
    subscriptions_.pop_back();
    force_reconnect("cannot send " + argv.front());  // the owner subscribes again from on_ready
  }
}

void RedisConnection::deliver(const ReplyCallback& cb, const Reply& reply) {
  call_guarded(reply_callback_who_, [&] { cb(reply); });
}

void RedisConnection::on_reply(redisAsyncContext* ac, void* reply, void* privdata) {
  std::unique_ptr<Pending> pending(static_cast<Pending*>(privdata));
  RedisConnection* self = pending->conn;
  if (self->inflight_ > 0) --self->inflight_;
  if (self->discard_callbacks_) return;
  CallbackScope scope(*self);
  if (reply == nullptr) {
    if (ac == self->ctx_) self->dying_ = true;  // on_disconnect follows
    self->deliver(pending->cb, Reply::io_error(context_error(ac)));
    return;
  }
  if (ac == self->ctx_) {
    self->last_activity_ = Clock::now();
    if (!self->sent_at_.empty()) self->sent_at_.pop_front();  // replies come in the order sent
  }
  const Reply r = reply_from_hiredis(static_cast<redisReply*>(reply));
  if (ac == self->ctx_ && self->target_.sentinel.enabled() && classify(r) == RedisErrorKind::ReadOnly) {
    // The node was demoted: find the master again (the owner sees the error and retries).
    self->force_reconnect(self->target_.host + ":" + std::to_string(self->target_.port) +
                          " is no longer the master (READONLY)");
  }
  self->deliver(pending->cb, r);
}

void RedisConnection::on_subscription_reply(redisAsyncContext* ac, void* reply, void* privdata) {
  auto* sub = static_cast<Subscription*>(privdata);
  RedisConnection* self = sub->conn;
  if (reply == nullptr || self->discard_callbacks_) {
    if (reply == nullptr && ac == self->ctx_) self->dying_ = true;
    return;  // the connection is going away; on_disconnect/on_down tell the owner
  }
  CallbackScope scope(*self);
  if (ac == self->ctx_) self->last_activity_ = Clock::now();
  self->deliver(sub->cb, reply_from_hiredis(static_cast<redisReply*>(reply)));
}

void RedisConnection::watchdog_tick() {
  if (state_ != State::Ready || ctx_ == nullptr) return;
  const auto now = Clock::now();
  const auto silent = now - last_activity_;
  // The age of the oldest unanswered command: a reply overdue by that much means a hung server
  // or path. Silence alone does not (an idle connection is quiet, and its next command's reply
  // is not late the moment it is sent).
  const auto waiting = sent_at_.empty() ? Clock::duration::zero() : now - sent_at_.front();
  if (!sent_at_.empty() && waiting > options_.watchdog_timeout) {
    drop_now("no reply for " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(waiting).count()) +
             " ms to a command sent then");
    return;
  }
  const auto ping_after = options_.ping_after.count() > 0 ? options_.ping_after : options_.watchdog_interval;
  if (options_.watchdog == Watchdog::Ping && inflight_ == 0 && silent >= ping_after) {
    send({"PING"}, [](const Reply&) {});
  }
  watchdog_timer_.arm(options_.watchdog_interval);
}

}  // namespace expiry
