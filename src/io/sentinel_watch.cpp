// See sentinel_watch.h.
#include "io/sentinel_watch.h"

#include <spdlog/spdlog.h>

#include <map>
#include <utility>

#include "io/redis_connection.h"
#include "redis/sentinel_reply.h"

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

// What a sentinel announces on these channels about the master it names.
const std::vector<std::string> kChannels = {"+switch-master", "+try-failover", "-failover-abort-not-elected",
                                            "-failover-abort-no-good-slave", "-failover-abort-slave-timeout"};

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
      resolver_(loop, endpoint, std::min(connect_timeout, std::chrono::milliseconds(1000))),
      recheck_timer_(loop, [this] { recheck(); }) {
  const SentinelDiscovery sentinels(endpoint);  // only for the sentinels' endpoints
  for (size_t i = 0; i < sentinels.sentinel_count(); ++i) {
    RedisConnection::Options options;
    options.endpoint = sentinels.sentinel_endpoint(i);
    options.role = "sentinel";
    options.connect_timeout = connect_timeout;
    options.backoff = backoff;
    options.watchdog = RedisConnection::Watchdog::Passive;  // a lost message is covered by recheck()
    auto sub = std::make_unique<RedisConnection>(loop, std::move(options));
    RedisConnection* conn = sub.get();
    conn->set_on_ready([this, conn] {
      std::vector<std::string> argv = {"SUBSCRIBE"};
      argv.insert(argv.end(), kChannels.begin(), kChannels.end());
      conn->subscribe(argv, [this](const Reply& r) { on_message(r); });
    });
    subscriptions_.push_back(std::move(sub));
  }
  for (auto& sub : subscriptions_) sub->start();
  recheck_timer_.arm(kRecheck);
}

void SentinelWatch::lookup(const AliveToken& alive, std::function<void(const MasterLookup&)> done) {
  resolver_.lookup(alive, std::move(done));
}

SentinelWatch::~SentinelWatch() {
  auto& watches = registry();
  for (auto it = watches.begin(); it != watches.end();) {
    it = it->second.expired() ? watches.erase(it) : std::next(it);
  }
}

void SentinelWatch::on_message(const Reply& message) {
  // ["message", channel, text]
  if (message.type != Reply::Type::Array || message.elements.size() != 3 || message.elements[0].str != "message") {
    return;
  }
  const std::string& channel = message.elements[1].str;
  const std::string& text = message.elements[2].str;
  const std::string& name = endpoint_.sentinel.master;
  if (channel == "+switch-master") {
    auto change = parse_switch_master(text);
    if (!change || change->master != name) return;
    spdlog::warn("sentinel: master {} switched from {} to {}", name, change->from.to_string(), change->to.to_string());
    for (RedisConnection* follower : followers_) follower->follow_master(change->to.host, change->to.port);
    return;
  }
  auto event = parse_instance_event(text);
  if (!event || event->type != "master" || event->name != name) return;
  if (channel == "+try-failover") {
    spdlog::warn("sentinel: failover of master {} started; holding every connection until the switch (at most {} s)",
                 name, kFailoverHold.count());
    for (RedisConnection* follower : followers_) follower->hold(kFailoverHold, "failover of " + name + " in progress");
  } else {
    spdlog::warn("sentinel: failover of master {} aborted ({})", name, channel);
    for (RedisConnection* follower : followers_) follower->release_hold();
  }
}

void SentinelWatch::recheck() {
  resolver_.lookup(alive_, [this](const MasterLookup& lookup) { on_recheck(lookup); });
}

void SentinelWatch::on_recheck(const MasterLookup& lookup) {
  recheck_timer_.arm(kRecheck);
  const std::string& name = endpoint_.sentinel.master;
  if (lookup.outcome == MasterLookup::Outcome::FailoverInProgress) {
    spdlog::warn("sentinel: {}; holding every connection until the switch (at most {} s)", lookup.why,
                 kFailoverHold.count());
    for (RedisConnection* follower : followers_) follower->hold(kFailoverHold, "failover of " + name + " in progress");
    return;
  }
  if (lookup.outcome != MasterLookup::Outcome::Found) return;  // the connections' own attempts report it
  for (RedisConnection* follower : followers_) follower->check_master(lookup.master.host, lookup.master.port);
}

}  // namespace expiry
