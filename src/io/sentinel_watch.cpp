// See sentinel_watch.h.
#include "io/sentinel_watch.h"

#include <spdlog/spdlog.h>

#include <map>
#include <utility>

#include "io/redis_connection.h"
#include "protocol/sentinel_reply.h"

namespace expiry {
namespace {

// The watches alive, by loop and Sentinel setup (the data endpoint's TLS settings included).
using WatchKey = std::pair<const EventLoop*, std::string>;
std::map<WatchKey, std::weak_ptr<SentinelWatch>>& registry() {
  static std::map<WatchKey, std::weak_ptr<SentinelWatch>> watches;
  return watches;
}

WatchKey key_of(const EventLoop& loop, const RedisEndpoint& endpoint) {
  std::string key = endpoint.sentinel.describe() + '\n' + endpoint.sentinel.password + '\n' +
                    (endpoint.tls.enabled ? "tls" : "plain");
  return {&loop, key};
}

}  // namespace

std::shared_ptr<SentinelWatch> SentinelWatch::join(EventLoop& loop, const RedisEndpoint& endpoint,
                                                   std::chrono::milliseconds connect_timeout,
                                                   const BackoffPolicy& backoff, RedisConnection* follower) {
  auto& watches = registry();
  const WatchKey key = key_of(loop, endpoint);
  std::shared_ptr<SentinelWatch> watch = watches[key].lock();
  if (!watch || watch->endpoint_.tls != endpoint.tls) {
    watch = std::make_shared<SentinelWatch>(loop, endpoint, connect_timeout, backoff);
    watches[key] = watch;
  }
  watch->followers_.insert(follower);
  return watch;
}

void SentinelWatch::leave(RedisConnection* follower) { followers_.erase(follower); }

SentinelWatch::SentinelWatch(EventLoop& loop, const RedisEndpoint& endpoint, std::chrono::milliseconds connect_timeout,
                             const BackoffPolicy& backoff)
    : loop_(loop),
      endpoint_(endpoint),
      discovery_(endpoint, std::min(connect_timeout, std::chrono::milliseconds(1000))),
      recheck_timer_(loop, [this] { recheck(); }) {
  RedisConnection::Options options;
  options.endpoint = discovery_.sentinel_endpoint(0);
  options.role = "sentinel";
  options.connect_timeout = connect_timeout;
  options.backoff = backoff;
  options.watchdog = RedisConnection::Watchdog::Passive;  // a lost hint is covered by recheck()
  // Each attempt goes to the next sentinel: one that is down does not stop the watch.
  options.choose_endpoint = [this] {
    const size_t n = discovery_.sentinel_count();
    return discovery_.sentinel_endpoint(next_sentinel_++ % n);
  };
  subscription_ = std::make_unique<RedisConnection>(loop, std::move(options));
  subscription_->set_on_ready([this] { on_ready(); });
  subscription_->start();
  recheck_timer_.arm(kRecheck);
}

SentinelWatch::~SentinelWatch() {
  auto& watches = registry();
  for (auto it = watches.begin(); it != watches.end();) {
    it = it->second.expired() ? watches.erase(it) : std::next(it);
  }
}

void SentinelWatch::on_ready() {
  --next_sentinel_;  // stay with the sentinel that answered after a later loss
  subscription_->subscribe({"SUBSCRIBE", "+switch-master"}, [this](const Reply& r) { on_message(r); });
}

void SentinelWatch::on_message(const Reply& message) {
  // ["message", "+switch-master", "<name> <old ip> <old port> <new ip> <new port>"]
  if (message.type != Reply::Type::Array || message.elements.size() != 3 || message.elements[0].str != "message") {
    return;
  }
  auto change = parse_switch_master(message.elements[2].str);
  if (!change || change->master != endpoint_.sentinel.master) return;
  ++switches_seen_;
  spdlog::warn("sentinel: master {} switched from {} to {}", change->master, change->from.to_string(),
               change->to.to_string());
  tell_followers(change->to.host, change->to.port);
}

void SentinelWatch::recheck() {
  if (auto named = discovery_.named_master()) tell_followers(named->host, named->port);
  recheck_timer_.arm(kRecheck);
}

void SentinelWatch::tell_followers(const std::string& host, int port) {
  for (RedisConnection* follower : followers_) follower->follow_master(host, port);
}

}  // namespace expiry
