// The subscriber side: PSUBSCRIBE __keyevent@*__:expired plus the wake channel of every bucket
// of the namespace and this relay's health channel, on a connection of its own (on a cluster,
// one per primary: expired events are node-local, while a PUBLISH reaches every node). It turns messages into calls and
// proves the subscription alive by PUBLISHing probes from the command connection.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/relay_config.h"
#include "functions/key_layout.h"
#include "io/event_loop.h"
#include "io/redis_connection.h"
#include "log/log_limiter.h"
#include "relay/relay_stats.h"

namespace expiry {

class ExpiryListener {
 public:
  // `bucket_count`: the namespace's buckets, whose wake channels it subscribes.
  ExpiryListener(EventLoop& loop, const RelayConfig& config, const KeyLayout& keys, int bucket_count,
                 RelayStats& stats, RedisConnection& commands);
  ExpiryListener(const ExpiryListener&) = delete;
  ExpiryListener& operator=(const ExpiryListener&) = delete;

  // A trigger key of bucket `bucket` (< bucket_count) expired.
  void set_on_trigger(std::function<void(int bucket, std::string_view id)> fn) { on_trigger_ = std::move(fn); }
  // Bucket `bucket`'s earliest due time moved earlier, to `due_ms`.
  void set_on_wake(std::function<void(int bucket, long long due_ms)> fn) { on_wake_ = std::move(fn); }
  // A bucket's recurring schedules need more occurrences computed ("recur" on its wake channel).
  void set_on_recur(std::function<void(int bucket)> fn) { on_recur_ = std::move(fn); }
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
  void subscribe_all();
  void on_keyevent(const Reply& msg);
  void on_channel(const Reply& msg);
  void confirmed();
  void connection_down(const std::string& why);
  void probe_tick();

  const RelayConfig& config_;
  const KeyLayout& keys_;
  RelayStats& stats_;
  RedisConnection& commands_;      // publishes the health probes
  const int bucket_count_;
  const std::string health_channel_;
  std::vector<std::string> wake_channels_;  // by bucket
  std::vector<std::string> sent_;  // what subscribe_all asked for, in order: replies come in this order
  int confirmations_ = 0;
  bool subscribed_ = false;
  bool probe_outstanding_ = false;  // a probe was published and has not come back yet
  Clock::time_point probe_sent_at_;
  LogLimiter invalid_id_log_{std::chrono::seconds(10)};  // expired trigger keys with invalid ids
  LogLimiter other_db_log_{std::chrono::seconds(10)};    // our trigger keys expiring in another db
  LogLimiter refused_log_{std::chrono::seconds(30)};     // subscriptions the ACL refuses, once per attempt
  std::function<void(int, std::string_view)> on_trigger_;
  std::function<void(int, long long)> on_wake_;
  std::function<void(int)> on_recur_;
  std::function<void()> on_subscribed_;
  Timer probe_timer_;
  RedisConnection connection_;     // last: destroyed first, while the members above still exist
};

}  // namespace expiry
