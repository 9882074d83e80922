// See relay.h.
#include "relay/relay.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include <memory>

#include "functions/bucket_plan.h"
#include "functions/function_library.h"
#include "redis/handshake_refusal.h"
#include "redis/info_text.h"
#include "redis/redis_error.h"

namespace expiry {

namespace {

// The health probe travels on this connection every health_probe_interval: it needs no PING
// of its own while idle.
RedisConnection::Options command_connection_options(const RelayConfig& config) {
  RedisConnection::Options o{config.redis,           "commands",         "expiry-relay-cmd-" + config.instance,
                             config.connect_timeout, config.watchdog_interval, config.watchdog_timeout,
                             config.reconnect,       RedisConnection::Watchdog::Ping};
  o.ping_after = config.health_probe_interval;
  return o;
}

}  // namespace

std::vector<std::string> relay_streams(const RelayConfig& config, const BucketScope& scope) {
  std::vector<std::string> streams;
  for (int bucket : scope.buckets) streams.push_back(scope.stream_of(KeyLayout(config.ns, bucket), config.stream));
  // Per-task streams lie in slots of their own: on a cluster no node relay is sure to own them.
  if (!scope.cluster) {
    for (const auto& s : config.trim_streams) {
      if (std::find(streams.begin(), streams.end(), s) == streams.end()) streams.push_back(s);
    }
  }
  return streams;
}

// The dead stream is declared only when it is not the one the library derives (STREAM:dead, and
// NS:{B}:dead for a bucket stream, where consumers look): a declared key must pass the relay's
// ACL key patterns on every call, while the derived one is touched only when a task is late.
ClaimLimits claim_limits_of(const RelayConfig& config, const BucketScope& scope) {
  ClaimLimits limits{config.max_late_ms, {}};
  if (!uses_bucket_streams(scope.bucket_count, scope.cluster) && config.dead_stream != config.stream + ":dead") {
    limits.dead_stream = config.dead_stream;
  }
  return limits;
}

Relay::Relay(EventLoop& loop, RelayConfig config, BucketScope scope, RelayStats* shared_stats)
    : loop_(loop),
      config_(std::move(config)),
      scope_(std::move(scope)),
      keys_(config_.ns),
      stats_(shared_stats != nullptr ? *shared_stats : own_stats_),
      commands_(loop, command_connection_options(config_)),
      functions_(commands_),
      claimer_(functions_, config_, stats_),
      listener_(loop, config_, keys_, scope_.bucket_count, stats_, commands_),
      drain_timer_(loop, [this] { drain_tick(); }),
      prepare_retry_(loop, [this] {
        if (commands_.ready() && !stopping_) prepare_redis();
      }),
      role_timer_(loop, [this] { check_role(); }) {
  for (int bucket : scope_.buckets) {
    KeyLayout keys(config_.ns, bucket);
    std::string stream = scope_.stream_of(keys, config_.stream);
    ClaimLimits limits = claim_limits_of(config_, scope_);
    auto sweeper = std::make_unique<Sweeper>(loop, functions_, config_, std::move(keys), std::move(stream),
                                             std::move(limits), stats_);
    sweeper->set_on_moved([this] { topology_hint("a bucket's slot moved (MOVED)"); });
    sweeper->set_readiness(&writes_);
    sweepers_.emplace(bucket, std::move(sweeper));
    refillers_.emplace(bucket, std::make_unique<RecurRefiller>(loop, functions_, KeyLayout(config_.ns, bucket),
                                                               config_.redis.db, stats_));
  }
  trimmer_ = std::make_unique<StreamTrimmer>(loop, functions_, config_, relay_streams(config_, scope_), stats_);
  trimmer_->set_on_moved([this] { topology_hint("a stream's slot moved (MOVED)"); });
  commands_.set_on_ready([this] { prepare_redis(); });
  commands_.set_on_down([this](const std::string&) {
    prepared_ = false;
    if (!unready_since_) unready_since_ = Clock::now();
    topology_hint("the command connection was lost");
  });
  commands_.set_on_handshake_error([this](const Reply& r) { on_handshake_error(r); });
  listener_.set_on_handshake_error([this](const Reply& r) { on_handshake_error(r); });
  listener_.set_on_trigger([this](int bucket, std::string_view id) {
    if (stopping_ || !config_.event_claims) return;
    Sweeper* sweeper = lane(bucket);
    if (sweeper == nullptr) {
      ++stats_.events_ignored;  // a bucket of another node (its slot is moving here or away)
      return;
    }
    if (sweeper->draining()) {
      // The trigger expired after its due time, so the draining sweep will claim the task; a
      // claim of its own would only cost Redis a second lookup (a burst's events arrive while
      // its sweep is still draining).
      ++stats_.events_to_draining_sweep;
      return;
    }
    claimer_.fire(sweeper->keys(), sweeper->stream(), sweeper->limits(), id);
  });
  listener_.set_on_wake([this](int bucket, long long due) {
    if (Sweeper* sweeper = lane(bucket)) sweeper->note_due(due);
  });
  listener_.set_on_recur([this](int bucket) {
    auto it = refillers_.find(bucket);
    if (it != refillers_.end() && prepared_) it->second->request();
  });
  listener_.set_on_subscribed([this] {
    if (prepared_) sweep_all("resubscribed");
  });
  claimer_.set_on_needs_sweep([this](int bucket) {
    if (Sweeper* sweeper = lane(bucket)) sweeper->sweep_now("event claim deferred");
  });
  claimer_.set_on_not_due([this](int bucket, long long due) {
    if (Sweeper* sweeper = lane(bucket)) sweeper->note_due(due);
  });
  claimer_.set_on_moved([this] { topology_hint("a task's slot moved (MOVED)"); });
  if (shared_stats != nullptr) return;  // the ClusterRelay exports the metrics
  register_relay_metrics(metrics_, stats_, [this] { return connections(); }, relay_streams(config_, scope_));
  // The same answers as /readyz and /healthz, so dashboards and probes agree.
  register_probe_metrics(metrics_, [this](std::string& why) { return ready(why); },
                         [this](std::string& why) { return healthy(why); });
}

RelayConnections Relay::connections() const {
  return RelayConnections{{&commands_}, {&listener_.connection()}, {&functions_}};
}

Sweeper* Relay::lane(int bucket) {
  auto it = sweepers_.find(bucket);
  return it == sweepers_.end() ? nullptr : it->second.get();
}

void Relay::sweep_all(const char* reason) {
  for (auto& [bucket, sweeper] : sweepers_) sweeper->sweep_now(reason);
}

void Relay::topology_hint(const char* why) {
  if (on_topology_hint_ && !stopping_) on_topology_hint_(why);
}

bool Relay::healthy(std::string& why) const {
  if (!unready_since_ || config_.unhealthy_after.count() == 0) return true;
  const auto for_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - *unready_since_);
  if (for_ms <= config_.unhealthy_after) return true;
  why = "no ready connection to Redis for " + std::to_string(for_ms.count() / 1000) + " s (unhealthy_after_ms=" +
        std::to_string(config_.unhealthy_after.count()) + "); see the log";
  return false;
}

void Relay::start() {
  unready_since_ = Clock::now();
  if (scope_.buckets.size() == 1 && !scope_.cluster) {
    spdlog::info("expiry-relay {} starting: redis={} namespace={} stream={} group={} sweep_interval={}ms",
                 config_.instance, config_.redis.where(), config_.ns, sweepers_.begin()->second->stream(),
                 config_.group, config_.sweep_interval.count());
  } else {
    spdlog::info("expiry-relay {} starting: redis={} namespace={} buckets={} of {} (streams {}:{{B}}:stream) group={} "
                 "sweep_interval={}ms",
                 config_.instance, config_.redis.where(), config_.ns, scope_.buckets.size(), scope_.bucket_count,
                 config_.ns, config_.group, config_.sweep_interval.count());
  }
  if (config_.max_late_ms > 0 && !sweepers_.empty()) {
    spdlog::info("lateness limit: tasks more than {} ms late (without a limit of their own) go to {}",
                 config_.max_late_ms, sweepers_.begin()->second->limits().dead_stream +
                                          (sweepers_.size() > 1 || scope_.cluster ? " (each bucket's own)" : ""));
  }
  commands_.start();
  listener_.start();
}

bool Relay::ready(std::string& why) const {
  if (stopping_) {
    why = "stopping";
    return false;
  }
  if (!commands_.ready()) {
    why = "command connection not connected";
    return false;
  }
  if (!prepared_) {
    why = "command connection connected, startup checks not passed yet (see the log)";
    return false;
  }
  if (!listener_.subscribed()) {
    why = "not subscribed to expired events";
    return false;
  }
  return writes_.ready(why);
}

void Relay::check_role() {
  if (stopping_ || !role_allowed_) return;
  role_timer_.arm(config_.health_probe_interval);
  if (!commands_.ready()) return;
  // INFO replication rather than ROLE: the relay's documented ACL user may run INFO.
  commands_.command({"INFO", "replication"}, [this](const Reply& r) {
    if (r.is_io_error()) return;
    const std::string role = r.failed() ? std::string() : info_field(r.str, "role");
    if (role.empty()) {
      role_allowed_ = !(classify(r) == RedisErrorKind::NoPermission || classify(r) == RedisErrorKind::UnknownCommand);
      if (!role_allowed_) spdlog::debug("INFO replication failed, ignored (readiness follows the writes only): {}", r.str);
      return;
    }
    const bool refused_before = writes_.refuses_writes();
    writes_.on_role(role);
    if (writes_.refuses_writes() && !refused_before) {
      spdlog::error("Redis at {} has role {}: it cannot take writes; the relay is not ready until it is a master "
                    "again",
                    config_.redis.where(), role);
    } else if (!writes_.refuses_writes() && refused_before) {
      spdlog::info("Redis at {} is a master again: sweeping", config_.redis.where());
      sweep_all("the node is a master again");
    }
  });
}

void Relay::on_handshake_error(const Reply& reply) {
  // Refused credentials (or a database that does not exist) before the relay ever worked are a
  // configuration error: stop. Later (a rotated password), keep retrying with backoff and let
  // operators see the log. Transient refusals (maxclients ...) never come here.
  const std::string why = handshake_refusal_message(config_.redis.where(), reply);
  if (!ever_prepared_) {
    fail(why);
  } else {
    spdlog::error("{}; retrying", why);
  }
}

void Relay::prepare_redis() {
  prepared_ = false;
  prepare_retry_.cancel();
  // The library, the two CONFIG checks, the cluster mode, the bucket count, and a group per stream.
  auto left = std::make_shared<int>(5 + static_cast<int>(sweepers_.size()));
  auto step_done = [this, left] {
    if (--*left == 0 && !stopping_) on_prepared();
  };
  functions_.load([this, step_done](const Reply& r) {
    if (r.is_io_error()) return;
    if (r.failed()) {
      if (classify(r) == RedisErrorKind::UnknownCommand) {
        fail("Redis 7.0 or newer is required (FUNCTION LOAD is unknown): " + r.str);
      } else if (classify(r) == RedisErrorKind::NoPermission) {
        fail("the Redis user may not load the function library (see docs/security.md): " + r.str);
      } else {
        retry_prepare("cannot load the function library " + std::string(kLibraryName) + ": " + r.str);
      }
      return;
    }
    step_done();
  });
  commands_.command({"CONFIG", "GET", "notify-keyspace-events"}, [this, step_done](const Reply& r) {
    if (r.is_io_error()) return;
    check_notifications(r);
    step_done();
  });
  commands_.command({"CONFIG", "GET", "maxmemory-policy"}, [this, step_done](const Reply& r) {
    if (r.is_io_error()) return;
    check_eviction(r);
    step_done();
  });
  commands_.command({"INFO", "cluster"}, [this, step_done](const Reply& r) {
    if (r.is_io_error()) return;
    check_cluster_mode(r);
    step_done();
  });
  if (scope_.cluster) {
    step_done();  // the ClusterRelay read NS:buckets (on the node that holds it) before it started
  } else {
    commands_.command({"GET", keys_.buckets_key()}, [this, step_done](const Reply& r) {
      if (r.is_io_error()) return;
      check_buckets(r, step_done);
    });
  }
  for (const auto& [bucket, sweeper] : sweepers_) create_group(sweeper->stream(), step_done);
}

void Relay::check_cluster_mode(const Reply& reply) {
  if (reply.failed()) {
    spdlog::info("cannot read INFO cluster ({}); assuming {}", reply.str, scope_.cluster ? "a cluster" : "one Redis");
    return;
  }
  const bool cluster = reply.str.find("cluster_enabled:1") != std::string::npos;
  if (cluster == scope_.cluster) return;
  if (cluster) {
    fail("Redis at " + config_.redis.where() +
         " is a Redis Cluster node, but the relay started in single-Redis mode (Redis could not be reached when "
         "it started); restart it to serve the cluster");
  } else {
    fail("Redis at " + config_.redis.where() + " is no longer a cluster node; restart the relay");
  }
}

void Relay::check_buckets(const Reply& reply, const std::function<void()>& done) {
  if (reply.failed()) {
    if (classify(reply) == RedisErrorKind::NoPermission) {
      spdlog::info("cannot read {} ({}); serving {} bucket(s)", keys_.buckets_key(), reply.str, scope_.bucket_count);
      done();
    } else {
      retry_prepare("cannot read " + keys_.buckets_key() + ": " + reply.str);
    }
    return;
  }
  std::optional<std::string> stored;
  if (reply.type != Reply::Type::Nil) stored = reply.str;
  std::string error;
  auto plan = plan_buckets(stored, config_.buckets, false, config_.ns, &error);
  if (!plan) {
    fail(error);
    return;
  }
  if (plan->buckets != scope_.bucket_count) {
    fail("namespace " + config_.ns + " has " + std::to_string(plan->buckets) + " buckets (key " +
         keys_.buckets_key() + ") but this relay started with " + std::to_string(scope_.bucket_count) +
         " (Redis could not be reached when it started, or the key changed since); restart it");
    return;
  }
  if (!plan->store) {
    done();
    return;
  }
  commands_.command({"SET", keys_.buckets_key(), std::to_string(plan->buckets), "NX"}, [this, done](const Reply& r) {
    if (r.is_io_error()) return;
    if (r.failed() && classify(r) != RedisErrorKind::NoPermission) {
      retry_prepare("cannot write " + keys_.buckets_key() + ": " + r.str);
      return;
    }
    done();  // a concurrent writer of another count is caught at the next (re)connect
  });
}

// At first start the group is created at 0, so entries forwarded before it existed are
// handled. Missing at a later reconnect, it was destroyed: created again at $, so consumers do
// not handle (or dead-letter) the whole stream again (as the consumers do, consumer/node_consumer.h).
void Relay::create_group(const std::string& stream, std::function<void()> done) {
  const bool seen = groups_seen_.count(stream) != 0;
  commands_.command({"XGROUP", "CREATE", stream, config_.group, seen ? "$" : "0", "MKSTREAM"},
                    [this, done, seen, stream](const Reply& r) {
                      if (r.is_io_error()) return;
                      const bool existed = classify(r) == RedisErrorKind::BusyGroup;
                      if (r.failed() && !existed) {
                        if (classify(r) == RedisErrorKind::NoPermission) {
                          fail("the Redis user may not create the consumer group (see docs/security.md): " + r.str);
                        } else {
                          if (classify(r) == RedisErrorKind::Moved) topology_hint("a stream's slot moved (MOVED)");
                          retry_prepare("cannot create consumer group " + config_.group + " on " + stream + ": " +
                                        r.str);
                        }
                        return;
                      }
                      if (seen && !existed) {
                        ++stats_.group_recreated;
                        spdlog::error("consumer group {} on {} was missing (destroyed); created it again at $: "
                                      "entries already in the stream are not handled again. To replay them: "
                                      "XGROUP SETID {} {} <id to resume after> (0: the whole stream)",
                                      config_.group, stream, stream, config_.group);
                      }
                      groups_seen_.insert(stream);
                      done();
                    });
}

void Relay::retry_prepare(const std::string& why) {
  if (prepare_retry_.armed()) return;
  const auto delay = backoff_delay(config_.reconnect, prepare_failures_++, 0.5);
  spdlog::error("{}; retrying in {} ms (tasks wait safely in the schedule)", why, delay.count());
  prepare_retry_.arm(delay);
}

void Relay::check_notifications(const Reply& reply) {
  // `problem` states the fact; what follows from it depends on require_notifications.
  std::string problem;
  std::string fix;
  stats_.keyspace_notifications[config_.instance] = false;  // until the reply says they are on
  if (reply.failed()) {
    problem = "cannot read notify-keyspace-events (" + reply.str + ")";
    if (classify(reply) == RedisErrorKind::NoPermission && !config_.require_notifications) {
      spdlog::info("{}: CONFIG GET is not granted, as docs/security.md recommends; if expired events are off, "
                   "tasks fire from the sweep only",
                   problem);
      return;
    }
  } else if (reply.type == Reply::Type::Array && reply.elements.size() == 2) {
    const std::string& flags = reply.elements[1].str;
    const bool keyevent = flags.find('E') != std::string::npos;
    const bool expired = flags.find('x') != std::string::npos || flags.find('A') != std::string::npos;
    if (!keyevent || !expired) {
      problem = "notify-keyspace-events is '" + flags + "', without E and x: no expired events will arrive";
      fix = " Fix: CONFIG SET notify-keyspace-events Ex (or see redis.conf)";
    }
  } else {
    problem = "unexpected CONFIG GET reply " + reply.describe();
  }
  if (problem.empty()) {
    stats_.keyspace_notifications[config_.instance] = true;
    return;
  }
  if (config_.require_notifications) {
    fail(problem + "; require_notifications is set, so the relay exits." + fix);
  } else {
    spdlog::warn("{}; tasks fire from the sweep only.{}", problem, fix);
  }
}

void Relay::check_eviction(const Reply& reply) {
  std::string problem;
  if (reply.failed()) {
    if (classify(reply) == RedisErrorKind::NoPermission && !config_.require_noeviction) {
      spdlog::info("cannot read maxmemory-policy (CONFIG GET is not granted); it must be noeviction, or Redis may "
                   "evict pending tasks");
      return;
    }
    problem = "cannot read maxmemory-policy (" + reply.str + ")";
  } else if (reply.type == Reply::Type::Array && reply.elements.size() == 2) {
    const std::string& policy = reply.elements[1].str;
    if (policy == "noeviction") return;
    problem = "maxmemory-policy is '" + policy + "': a full Redis may evict pending tasks and lose them";
  } else {
    problem = "unexpected CONFIG GET reply " + reply.describe();
  }
  const std::string fix = " Fix: CONFIG SET maxmemory-policy noeviction (or see redis.conf)";
  if (config_.require_noeviction) {
    fail(problem + "; require_noeviction is set, so the relay exits." + fix);
  } else {
    spdlog::warn("{}.{}", problem, fix);
  }
}

void Relay::on_prepared() {
  prepared_ = true;
  unready_since_.reset();
  prepare_failures_ = 0;
  ever_prepared_ = true;
  sweep_all("connected");
  trimmer_->start();
  for (auto& [bucket, refiller] : refillers_) refiller->start();
  // Through Sentinel the connection itself moves off a node that is no longer the master.
  if (!config_.redis.sentinel.enabled() && !role_timer_.armed()) role_timer_.arm(config_.health_probe_interval);
}

void Relay::fail(const std::string& why) {
  if (exit_code_ != 0) return;
  spdlog::critical("{}", why);
  exit_code_ = 2;
  stopping_ = true;
  for (auto& [bucket, sweeper] : sweepers_) sweeper->stop();
  for (auto& [bucket, refiller] : refillers_) refiller->stop();
  trimmer_->stop();
  listener_.close();  // no reconnect attempts (or their log lines) after a fatal error
  commands_.close();
  loop_.stop();
}

void Relay::stop(std::function<void()> done, std::chrono::milliseconds drain_limit) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(done);
  spdlog::info("stopping: letting in-flight calls finish");
  for (auto& [bucket, sweeper] : sweepers_) sweeper->stop();
  for (auto& [bucket, refiller] : refillers_) refiller->stop();
  trimmer_->stop();
  listener_.close();
  drain_deadline_ = Clock::now() + drain_limit;
  drain_tick();
}

void Relay::drain_tick() {
  bool drained = claimer_.inflight() == 0 && !trimmer_->busy();
  for (const auto& [bucket, sweeper] : sweepers_) drained = drained && !sweeper->busy();
  for (const auto& [bucket, refiller] : refillers_) drained = drained && !refiller->busy();
  if (!drained && Clock::now() < drain_deadline_) {
    drain_timer_.arm(std::chrono::milliseconds(5));
    return;
  }
  if (!drained) spdlog::warn("stop: gave up waiting for in-flight calls");
  commands_.set_on_closed([this] {
    spdlog::info("stopped: {}", stats_.summary());
    if (on_stopped_) on_stopped_();
  });
  commands_.close();
}

}  // namespace expiry
