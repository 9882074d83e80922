// The subscriber side: PSUBSCRIBE __keyevent@*__:expired plus the namespace's wake channel and
// this relay's health channel, on a connection of its own. It turns messages into calls and
// proves the subscription alive by PUBLISHing probes from the command connection.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "io/event_loop.h"
#include "protocol/key_layout.h"
#include "config/log_limiter.h"
#include "io/redis_connection.h"
#include "config/relay_config.h"
#include "relay/relay_stats.h"

namespace expiry {

class ExpiryListener {
 public:
  ExpiryListener(EventLoop& loop, const RelayConfig& config, const KeyLayout& keys, RelayStats& stats,
                 RedisConnection& commands);
  ExpiryListener(const ExpiryListener&) = delete;
  ExpiryListener& operator=(const ExpiryListener&) = delete;

  void set_on_trigger(std::function<void(std::string_view id)> fn) { on_trigger_ = std::move(fn); }
  void set_on_wake(std::function<void(long long due_ms)> fn) { on_wake_ = std::move(fn); }
  // Called each time all subscriptions are confirmed (at start and after every reconnect).
  void set_on_subscribed(std::function<void()> fn) { on_subscribed_ = std::move(fn); }
  void set_on_handshake_error(std::function<void(const Reply&)> fn) {
    connection_.set_on_handshake_error(std::move(fn));
  }

  void start();
  void close();
  bool subscribed() const { return subscribed_; }
  RedisConnection& connection() { return connection_; }
  const RedisConnection& connection() const { return connection_; }

 private:
  static constexpr int kSubscriptions = 3;

  void subscribe_all();
  void on_keyevent(const Reply& msg);
  void on_channel(const Reply& msg);
  void confirmed();
  void probe_tick();

  const RelayConfig& config_;
  const KeyLayout& keys_;
  RelayStats& stats_;
  RedisConnection& commands_;      // publishes the health probes
  const std::string health_channel_;
  const std::string wake_channel_;
  int confirmations_ = 0;
  bool subscribed_ = false;
  bool probe_outstanding_ = false;  // a probe was published and has not come back yet
  Clock::time_point probe_sent_at_;
  LogLimiter invalid_id_log_{std::chrono::seconds(10)};  // expired trigger keys with invalid ids
  LogLimiter other_db_log_{std::chrono::seconds(10)};    // our trigger keys expiring in another db
  std::function<void(std::string_view)> on_trigger_;
  std::function<void(long long)> on_wake_;
  std::function<void()> on_subscribed_;
  Timer probe_timer_;
  RedisConnection connection_;     // last: destroyed first, while the members above still exist
};

}  // namespace expiry
