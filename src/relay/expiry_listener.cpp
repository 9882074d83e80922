// See expiry_listener.h. Message handling does nothing slow: parse, then hand the id on.
#include "relay/expiry_listener.h"

#include <spdlog/spdlog.h>

#include "functions/wake_message.h"

namespace expiry {

namespace {
constexpr const char* kExpiredPattern = "__keyevent@*__:expired";
}

ExpiryListener::ExpiryListener(EventLoop& loop, const RelayConfig& config, const KeyLayout& keys, int bucket_count,
                               RelayStats& stats, RedisConnection& commands)
    : config_(config),
      keys_(keys),
      stats_(stats),
      commands_(commands),
      bucket_count_(bucket_count),
      health_channel_(keys.health_channel(config.instance)),
      probe_timer_(loop, [this] { probe_tick(); }),
      connection_(loop, RedisConnection::Options{config.redis, "subscriber", "expiry-relay-sub-" + config.instance,
                                                 config.connect_timeout, config.watchdog_interval,
                                                 config.watchdog_timeout, config.reconnect,
                                                 RedisConnection::Watchdog::Passive}) {
  for (int b = 0; b < bucket_count_; ++b) wake_channels_.push_back(KeyLayout(keys_.ns(), b).wake_channel());
  connection_.set_on_ready([this] { subscribe_all(); });
  connection_.set_on_down([this](const std::string& why) { connection_down(why); });
}

void ExpiryListener::start() {
  connection_.start();
  probe_timer_.arm(config_.health_probe_interval);
}

void ExpiryListener::close() {
  probe_timer_.cancel();
  subscribed_ = false;
  connection_.close();
}

void ExpiryListener::subscribe_all() {
  confirmations_ = 0;
  subscribed_ = false;
  probe_outstanding_ = false;
  sent_.clear();
  sent_.push_back(kExpiredPattern);
  connection_.subscribe({"PSUBSCRIBE", kExpiredPattern}, [this](const Reply& m) { on_keyevent(m); });
  for (const auto& wake : wake_channels_) {
    sent_.push_back(wake);
    connection_.subscribe({"SUBSCRIBE", wake}, [this](const Reply& m) { on_channel(m); });
  }
  sent_.push_back(health_channel_);
  connection_.subscribe({"SUBSCRIBE", health_channel_}, [this](const Reply& m) { on_channel(m); });
}

// hiredis answers a refused (P)SUBSCRIBE by dropping the connection with Redis's error as the
// reason, so the refusal arrives here. Confirmations come in the order sent: the first
// unconfirmed channel is the refused one. The connection retries with its backoff, since an
// operator may grant the rule later.
void ExpiryListener::connection_down(const std::string& why) {
  const bool refused = !subscribed_ && why.rfind("NOPERM", 0) == 0 &&
                       confirmations_ < static_cast<int>(sent_.size());
  subscribed_ = false;
  probe_outstanding_ = false;
  if (!refused) return;
  if (auto dropped = refused_log_.allow(Clock::now())) {
    const std::string& channel = sent_[static_cast<size_t>(confirmations_)];
    const std::string held_back =
        *dropped > 0 ? " (" + std::to_string(*dropped) + " more refusals since the last line)" : "";
    spdlog::error("Redis refused the subscription to {}: {}. The relay's user needs the ACL rule &{} "
                  "(docs/security.md); without it no {} arrive. Retrying with the reconnect backoff{}",
                  channel, why, channel, confirmations_ == 0 ? "expired events" : "wake-ups or health probes",
                  held_back);
  }
}

void ExpiryListener::confirmed() {
  // The pattern, every wake channel and the health channel.
  if (++confirmations_ != 2 + static_cast<int>(wake_channels_.size())) return;
  subscribed_ = true;
  if (wake_channels_.size() == 1) {
    spdlog::info("subscribed to {} and {}", kExpiredPattern, wake_channels_[0]);
  } else {
    spdlog::info("subscribed to {} and the wake channels of {} buckets", kExpiredPattern, wake_channels_.size());
  }
  if (on_subscribed_) on_subscribed_();
}

void ExpiryListener::on_keyevent(const Reply& msg) {
  if (msg.type != Reply::Type::Array || msg.elements.empty()) return;
  const std::string& kind = msg.elements[0].str;
  if (kind == "psubscribe") {
    confirmed();
    return;
  }
  if (kind != "pmessage" || msg.elements.size() != 4) return;
  ++stats_.events_received;
  const std::string& key = msg.elements[3].str;
  auto db = db_from_expired_channel(msg.elements[2].str);
  auto task_key = keys_.parse_task_key(key);
  if (!db || !task_key || task_key->kind != TaskKeyKind::Trigger || task_key->bucket >= bucket_count_) {
    ++stats_.events_ignored;
    return;
  }
  // Keys are logged with {:?} (quoted, controls, invisible code points and invalid UTF-8
  // escaped): they come from outside and may hold a line break.
  if (*db != config_.redis.db) {
    // A trigger key of our namespace in another database: producers and this relay disagree on
    // the database, and those tasks would never fire from here.
    ++stats_.events_ignored;
    ++stats_.events_other_db;
    if (auto dropped = other_db_log_.allow(Clock::now())) {
      spdlog::warn("trigger key {:?} expired in database {}, but this relay serves database {}: producers and relays "
                   "must use the same database (ignored; {} more such events since the last line)",
                   key, *db, config_.redis.db, *dropped);
    }
    return;
  }
  const std::string_view id = task_key->id;
  if (auto err = task_id_error(id)) {
    // No producer using the library writes such a key, and the library would refuse the claim.
    ++stats_.events_ignored;
    ++stats_.events_invalid_id;
    if (auto dropped = invalid_id_log_.allow(Clock::now())) {
      spdlog::warn("expired trigger key {:?} holds no valid task id ({}); not claimed ({} more such events since the "
                   "last line)",
                   key, *err, *dropped);
    }
    return;
  }
  if (on_trigger_) on_trigger_(task_key->bucket, id);
}

void ExpiryListener::on_channel(const Reply& msg) {
  if (msg.type != Reply::Type::Array || msg.elements.empty()) return;
  const std::string& kind = msg.elements[0].str;
  if (kind == "subscribe") {
    confirmed();
    return;
  }
  if (kind != "message" || msg.elements.size() != 3) return;
  const std::string& channel = msg.elements[1].str;
  if (channel == health_channel_) {
    probe_outstanding_ = false;
    probe_timer_.arm(config_.health_probe_interval);  // the next probe, a period after this one came back
    return;
  }
  const std::optional<int> bucket = keys_.bucket_from_wake_channel(channel);
  if (bucket && *bucket < bucket_count_) {
    const std::optional<WakeMessage> wake = parse_wake_message(msg.elements[2].str);
    if (wake && !wake_is_for_db(*wake, config_.redis.db)) return;  // a task of another database
    if (wake && wake->recur) {
      if (on_recur_) on_recur_(*bucket);
      return;
    }
    ++stats_.wakeups;
    if (wake && on_wake_) on_wake_(*bucket, wake->due_ms);
  }
}

// Runs a health_probe_interval after the last probe came back (or was due), and again
// watchdog_timeout after sending one: a subscription that dies is found within the sum.
void ExpiryListener::probe_tick() {
  probe_timer_.arm(config_.health_probe_interval);
  if (!subscribed_ || !commands_.ready()) return;
  const auto now = Clock::now();
  if (probe_outstanding_) {
    if (now - probe_sent_at_ >= config_.watchdog_timeout) {
      ++stats_.health_probe_failures;
      probe_outstanding_ = false;
      subscribed_ = false;
      connection_.force_reconnect("health probe not received within " +
                                  std::to_string(config_.watchdog_timeout.count()) + " ms");
    } else {
      probe_timer_.arm(std::chrono::duration_cast<std::chrono::milliseconds>(config_.watchdog_timeout -
                                                                             (now - probe_sent_at_)) +
                       std::chrono::milliseconds(1));
    }
    return;
  }
  probe_outstanding_ = true;
  probe_sent_at_ = now;
  probe_timer_.arm(config_.watchdog_timeout);
  commands_.command({"PUBLISH", health_channel_, "1"}, [this](const Reply& r) {
    if (r.failed()) {
      probe_outstanding_ = false;  // the command connection failed, not the subscription
      if (!r.is_io_error()) spdlog::error("health probe PUBLISH {} refused: {}", health_channel_, r.str);
      return;
    }
    if (r.type == Reply::Type::Integer && r.integer == 0 && subscribed_) {
      // Nobody is subscribed to our own channel: the server dropped the subscription.
      ++stats_.health_probe_failures;
      probe_outstanding_ = false;
      subscribed_ = false;
      connection_.force_reconnect("health probe had no subscriber");
    }
  });
}

}  // namespace expiry
