// The expiry-relay service on one Redis node: a command connection (claims, sweeps, health
// probes), an expiry listener on its own connection, and a sweeper per bucket it serves (every
// bucket on a single Redis; on a cluster, ClusterRelay runs one Relay per primary with the
// buckets that primary owns). Checks Redis at every (re)connect: the function library,
// notify-keyspace-events, the cluster mode, the bucket count and each stream's consumer group.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "config/relay_config.h"
#include "functions/key_layout.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "io/redis_connection.h"
#include "relay/bucket_scope.h"
#include "relay/event_claimer.h"
#include "relay/expiry_listener.h"
#include "relay/relay_metrics.h"
#include "relay/relay_stats.h"
#include "relay/stream_trimmer.h"
#include "relay/recur_refiller.h"
#include "relay/sweeper.h"
#include "service/metrics.h"

namespace expiry {

// The streams a relay serving `scope` forwards into (and trims): the configured one on one
// Redis with one bucket, else each bucket's NS:{B}:stream.
std::vector<std::string> relay_streams(const RelayConfig& config, const BucketScope& scope);

// What the claims and sweeps send: the relay's lateness limit, and the configured dead_stream
// when the library would not derive it (relay.cpp).
ClaimLimits claim_limits_of(const RelayConfig& config, const BucketScope& scope);

class Relay {
 public:
  // `shared_stats`: the counters of a ClusterRelay, which owns the metrics of all its node
  // relays; null: this Relay keeps its own stats and metrics.
  Relay(EventLoop& loop, RelayConfig config, BucketScope scope = {}, RelayStats* shared_stats = nullptr);
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  void start();
  // Graceful stop: no new claims or sweeps; in-flight calls finish (bounded by
  // `drain_limit`), then both connections close and `done` runs.
  void stop(std::function<void()> done, std::chrono::milliseconds drain_limit = std::chrono::milliseconds(10000));
  // Stops at once with exit code 2 after a configuration problem Redis revealed
  // (wrong password, Redis too old, notifications missing with require_notifications).
  void fail(const std::string& why);

  // Called when Redis answered MOVED (a bucket's slot moved away) or the command connection
  // was lost: on a cluster, the topology may have changed.
  void set_on_topology_hint(std::function<void(const char* why)> fn) { on_topology_hint_ = std::move(fn); }

  int exit_code() const { return exit_code_; }
  bool stopping() const { return stopping_; }
  const BucketScope& scope() const { return scope_; }
  const RelayStats& stats() const { return stats_; }
  RelayConnections connections() const;
  const Metrics& metrics() const { return metrics_; }
  // Ready means "can forward": the command connection passed the startup checks, the listener
  // is subscribed, and the node takes the relay's writes (WriteReadiness: no READONLY,
  // MASTERDOWN or ROLE other than master, sweeps not failing again and again).
  bool ready(std::string& why) const;
  // Healthy unless the relay has gone longer than config.unhealthy_after without a ready
  // command connection (since start or since the connection was lost): then a restart may
  // help (a wrong route, a stale DNS answer), and /healthz says so.
  bool healthy(std::string& why) const;

 private:
  void prepare_redis();
  void check_notifications(const Reply& reply);
  // Warns (or fails, with require_noeviction) unless maxmemory-policy is noeviction.
  void check_eviction(const Reply& reply);
  // A startup check failed for a reason that may pass (LOADING, READONLY, OOM ...): log, and
  // run the checks again after a backoff delay.
  void retry_prepare(const std::string& why);
  void on_prepared();
  void on_handshake_error(const Reply& reply);
  void drain_tick();
  // Reads NS:buckets and refuses to run with another count than the one this Relay serves.
  void check_buckets(const Reply& reply, const std::function<void()>& done);
  void check_cluster_mode(const Reply& reply);
  void create_group(const std::string& stream, std::function<void()> done);
  Sweeper* lane(int bucket);
  void sweep_all(const char* reason);
  void topology_hint(const char* why);
  // Without Sentinel, every health probe interval: is the node still a master (INFO
  // replication's role)? A user refused INFO is not asked again; then only the writes tell
  // (WriteReadiness).
  void check_role();

  EventLoop& loop_;
  const RelayConfig config_;
  const BucketScope scope_;
  const KeyLayout keys_;
  RelayStats own_stats_;
  RelayStats& stats_;  // own_stats_, or the ClusterRelay's
  Metrics metrics_;    // empty when the stats are shared
  RedisConnection commands_;
  FunctionCaller functions_;
  EventClaimer claimer_;
  std::map<int, std::unique_ptr<Sweeper>> sweepers_;  // by bucket
  std::map<int, std::unique_ptr<RecurRefiller>> refillers_;  // by bucket: recurring schedules' instants
  std::unique_ptr<StreamTrimmer> trimmer_;             // the streams of sweepers_
  ExpiryListener listener_;
  Timer drain_timer_;
  Timer prepare_retry_;
  WriteReadiness writes_;   // can the node take our writes? (ready())
  Timer role_timer_;
  bool role_allowed_ = true;  // the ACL lets this user run ROLE
  uint32_t prepare_failures_ = 0;
  bool prepared_ = false;   // the current command connection passed prepare_redis()
  std::optional<Clock::time_point> unready_since_;  // since when the commands are not prepared
  bool ever_prepared_ = false;
  std::set<std::string> groups_seen_;  // streams whose group existed (or was created) once: missing at a reconnect, it was destroyed
  std::function<void(const char*)> on_topology_hint_;
  bool stopping_ = false;
  int exit_code_ = 0;
  Clock::time_point drain_deadline_;
  std::function<void()> on_stopped_;
};

}  // namespace expiry
