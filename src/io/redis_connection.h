// One asynchronous Redis connection (hiredis on libevent) that reconnects by itself.
// It is the only owner of a redisAsyncContext; all hiredis includes stay in the .cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "config/backoff.h"
#include "config/redis_url.h"
#include "io/event_loop.h"
#include "redis/reply.h"

struct redisAsyncContext;
struct ssl_st;

namespace expiry {

class SentinelWatch;
struct MasterLookup;
class TlsContext;

class RedisConnection {
 public:
  enum class State { Disconnected, Connecting, Ready, Closing, Closed };
  // Ping: PING when idle, drop if a reply is overdue. Passive: the owner proves liveness (a
  // subscribed connection answers PING differently; see the health channel in
  // relay/expiry_listener.h); only overdue replies are checked.
  enum class Watchdog { Ping, Passive };

  struct Options {
    // endpoint.tls.enabled: TLS (io/tls_context), retried like any failure.
    // endpoint.sentinel.enabled(): every attempt first asks the sentinels for the master, off
    // the loop (io/sentinel_watch.h, io/sentinel_resolver.h: no loop ever waits on a sentinel);
    // while a sentinel reports a failover in progress it waits (without counting failures),
    // the handshake checks ROLE, a READONLY reply or a +switch-master moves the connection to
    // the new master, and on_ready follows as after any reconnect.
    RedisEndpoint endpoint;
    std::string role;         // "commands", "subscriber": used in logs and CLIENT SETNAME
    std::string client_name;  // CLIENT SETNAME value (no spaces); empty: none
    // TCP connect (timed by hiredis), then again the handshake: TLS, AUTH, SELECT, PING.
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds watchdog_interval{1000};  // how often overdue replies are looked for
    // The connection is dropped when its oldest unanswered command is older than this (not when
    // it has merely been quiet: an idle connection keeps its silence).
    std::chrono::milliseconds watchdog_timeout{3000};
    BackoffPolicy backoff;
    Watchdog watchdog = Watchdog::Ping;
    // A connection lost sooner than this after becoming Ready does not reset the backoff: a
    // server that accepts and then drops every connection is retried ever more slowly.
    std::chrono::milliseconds stable_after{1000};
    // Watchdog::Ping: the silence after which an idle connection sends a PING (0: the
    // watchdog_interval). An owner that sends something periodically anyway sets its period.
    std::chrono::milliseconds ping_after{0};
  };

  using ReplyCallback = std::function<void(const Reply&)>;

  RedisConnection(EventLoop& loop, Options options);
  // Frees the context; pending callbacks are discarded without being called (their owners
  // are being destroyed too), and so is deferred work (on_closed included). Use close() for
  // a graceful end. Destroying a connection from inside one of its own callbacks (a reply,
  // on_ready, on_down, on_handshake_error) is a programming error: it aborts with a message.
  // on_closed runs from the loop, outside them, so the owner may destroy it there.
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Called each time the connection becomes Ready (after AUTH/SELECT).
  void set_on_ready(std::function<void()> fn) { on_ready_ = std::move(fn); }
  // Called when a Ready connection is lost; a reconnect is already scheduled.
  void set_on_down(std::function<void(const std::string& why)> fn) { on_down_ = std::move(fn); }
  // Called when the handshake meets a refusal that retrying cannot cure: credentials refused
  // or required (NOAUTH, WRONGPASS, NOPERM on any step), a SELECT refused for good, or TLS that
  // does not fit the server (an IoError reply naming the cause, from io/tls_context), or a
  // master name no sentinel knows (an IoError reply from io/sync/sentinel_discovery). The
  // connection retries anyway, with backoff, unless the owner closes it. Transient refusals
  // (maxclients, LOADING on AUTH ...) are only logged and retried.
  void set_on_handshake_error(std::function<void(const Reply&)> fn) { on_handshake_error_ = std::move(fn); }
  // Called once after close() has finished.
  void set_on_closed(std::function<void()> fn) { on_closed_ = std::move(fn); }

  // Starts connecting; failures retry with backoff until close().
  void start();
  // Sends a command. `cb` runs exactly once, on the loop: with the reply, with an error reply,
  // or with an IoError if the connection is not Ready or is lost first.
  void command(const std::vector<std::string>& argv, ReplyCallback cb);
  // Sends (P)SUBSCRIBE; `on_message` runs for the confirmation and every message, until the
  // connection is lost. Subscriptions are not renewed on reconnect: do that from on_ready.
  // If the connection is not Ready, or hiredis refuses to send, nothing is sent and
  // `on_message` is never called; a refused send forces a reconnect, so on_ready follows.
  void subscribe(const std::vector<std::string>& argv, ReplyCallback on_message);
  // Drops the connection and reconnects with backoff (deferred, so callable from callbacks).
  void force_reconnect(std::string why);
  // Lets in-flight replies arrive, then disconnects; no reconnect afterwards.
  void close();
  // Through Sentinel: ends a hold() and reconnects (deferred) unless host:port is the node in
  // use already. No-op without Sentinel.
  void follow_master(const std::string& host, int port);
  // Through Sentinel, what a periodic check found: reconnects (deferred) when the connection is
  // up or coming up to a node other than host:port. Never ends a hold. No-op without Sentinel.
  void check_master(const std::string& host, int port);
  // Through Sentinel, while the master is being replaced: disconnects (deferred) and makes no
  // attempt until follow_master(), release_hold() or `max` has passed. No-op without Sentinel.
  void hold(std::chrono::milliseconds max, const std::string& why);
  void release_hold();

  // The endpoint in use or last tried (through Sentinel: the master the sentinels named).
  const RedisEndpoint& target() const { return target_; }

  bool ready() const { return state_ == State::Ready && !dying_; }
  size_t inflight() const { return inflight_; }
  uint64_t reconnects() const { return reconnects_; }

 private:
  struct Pending;
  struct Subscription;
  class CallbackScope;

  static void on_connect(const redisAsyncContext* ac, int status);
  static void on_disconnect(const redisAsyncContext* ac, int status);
  static void on_reply(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_subscription_reply(redisAsyncContext* ac, void* reply, void* privdata);

  void connect_now();
  // Through Sentinel: what the lookup connect_now() asked for found.
  void on_master_lookup(const MasterLookup& lookup);
  // Opens the context to target_ (after a lookup, through Sentinel).
  void connect_to_target();
  void begin_handshake();
  void handshake_step_done(const Reply& reply, const std::string& step, uint64_t attempt);
  void handshake_refused(const std::string& step, const Reply& reply);
  void become_ready();
  void drop_now(const std::string& why);
  void attempt_failed(const std::string& why);
  // target_ for logs: through Sentinel, before the sentinels named a master, the sentinels.
  std::string target_described() const;
  void attempt_failed_timeout();
  std::string connect_timeout_text() const;
  // Why `ac` failed: hiredis's text, with OpenSSL's cause for TLS and a hint for plain text.
  // Before Ready, sets *tls_refusal when the cause is TLS not fitting the server: a definite
  // cause (a certificate that does not verify, an alert), or, before the first Ready, a close
  // before any answer that a probe (tls_probe.h) pins on the setup (plain text against a TLS
  // port, a missing client certificate). A close that only a network fault explains is retried.
  std::string failure_text(const redisAsyncContext* ac, bool* tls_refusal);
  // attempt_failed, then on_handshake_error: retrying cannot cure it, the owner decides.
  void attempt_refused_by_tls(const std::string& why);
  void schedule_retry_after_loss(const std::string& why);
  void watchdog_tick();
  bool send(const std::vector<std::string>& argv, ReplyCallback cb);
  void deliver(const ReplyCallback& cb, const Reply& reply);
  // Runs fn (work of this connection's own timers or deferred calls) inside a CallbackScope.
  template <class Fn>
  void run_own(Fn&& fn);

  EventLoop& loop_;
  Options options_;
  RedisEndpoint target_;              // options_.endpoint, or the master the sentinels named last
  std::optional<Clock::time_point> held_until_;  // hold(): no attempt before this
  const std::string reply_callback_who_;  // "redis <role>: reply callback", for the exception barrier
  int in_callback_ = 0;               // depth of this connection's own callbacks on the stack
  redisAsyncContext* ctx_ = nullptr;  // owned by hiredis once connecting; nulled when hiredis frees it
  std::shared_ptr<const TlsContext> tls_;  // set for rediss:// at the first connect
  ssl_st* ssl_ = nullptr;             // ctx_'s TLS session (hiredis owns it), for failure messages
  State state_ = State::Disconnected;
  bool dying_ = false;                // hiredis is failing this context's callbacks; await on_disconnect
  bool discard_callbacks_ = false;    // set by the destructor: drop pending callbacks uncalled
  bool was_ready_ = false;            // this context reached Ready (so losing it calls on_down)
  bool ever_ready_ = false;
  size_t inflight_ = 0;               // commands sent and not yet answered (excluding subscriptions)
  std::deque<Clock::time_point> sent_at_;  // when each unanswered command of ctx_ was sent, oldest first
  size_t handshake_left_ = 0;         // handshake replies still expected
  bool handshake_failed_ = false;     // a step was refused: the other replies are ignored
  uint64_t attempt_ = 0;              // connection attempts made; tags handshake replies
  Clock::time_point ready_since_;     // when the connection last became Ready
  uint32_t failures_ = 0;             // consecutive failed attempts, for backoff
  uint64_t reconnects_ = 0;           // times Ready was reached again after a loss
  Clock::time_point last_activity_;   // last reply or message received
  std::vector<std::unique_ptr<Subscription>> subscriptions_;  // privdata of the live context
  std::minstd_rand rng_;
  Timer handshake_timer_;
  Timer retry_timer_;
  Timer watchdog_timer_;
  std::function<void()> on_ready_;
  std::function<void(const std::string&)> on_down_;
  std::function<void(const Reply&)> on_handshake_error_;
  std::function<void()> on_closed_;
  bool resolving_ = false;                        // through Sentinel: a lookup is under way
  bool resolved_ = false;                         // through Sentinel: target_ is a master the sentinels named
  bool failover_logged_ = false;                  // "waiting for the failover" logged for this wait
  std::shared_ptr<SentinelWatch> watch_;          // through Sentinel: lookups, +switch-master, shared
  AliveToken alive_;                  // guards work this connection defers to the loop
};

}  // namespace expiry
