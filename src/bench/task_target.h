// Where the cluster scenario's tasks live: one Redis or a Redis Cluster, seen the same way by the
// scenario. A namespace of B buckets placed as the Producer places it (producer/task_placement.h:
// a task's bucket, keys and slot, the output streams), with the bench's own connections (long
// reply timeouts, its pipeline depth) so that the measured traffic is only the scenario's.
// Not thread-safe: one target per thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_context.h"
#include "bench/relay_process.h"
#include "bench/stream_reader.h"
#include "bench/task_writer.h"
#include "functions/function_library.h"
#include "io/sync/cluster_client.h"
#include "io/sync/sync_connection.h"
#include "producer/task_placement.h"

namespace expiry::bench {

// Redis CPU seconds (INFO cpu: used_cpu_sys + used_cpu_user) summed over nodes.
struct RedisCpu {
  double primaries = 0;
  double replicas = 0;  // cluster only: the replicas of the primaries (0 on one Redis)
};

class TaskTarget {
 public:
  // One Redis at ctx.redis_url with `buckets` buckets (1: the legacy layout and ctx.stream).
  static std::unique_ptr<TaskTarget> single(const BenchContext& ctx, int buckets);
  // The Redis Cluster that `seed_url` names, with `buckets` buckets. Throws Error if it is not one.
  static std::unique_ptr<TaskTarget> cluster(const BenchContext& ctx, const std::string& seed_url, int buckets);

  bool is_cluster() const { return cluster_ != nullptr; }
  int buckets() const { return placement_.buckets; }
  size_t primary_count() { return is_cluster() ? cluster_->primaries().size() : 1; }
  // The bench context a relay for this target runs with (its --redis-url).
  const BenchContext& relay_context() const { return ctx_; }

  // FLUSHALL on every primary, the library loaded everywhere, NS:buckets written when B > 1 or
  // on a cluster (as the relay would), every output stream created empty with the group.
  void reset();
  // Every output stream deleted and created again, empty, with the group.
  void reset_streams();

  // One FCALL expiry_schedule, unpipelined. Throws Error if it is rejected.
  ScheduleResult schedule_one(const std::string& id, ScheduleMode mode, long long ms);
  // Tasks "<prefix><i>", i < n, pipelined (cluster: per node, in parallel). Throws Error if any is
  // rejected.
  ScheduleOutcome schedule_many(const std::string& prefix, size_t n, const std::function<TaskDue(size_t)>& due_of);
  // Sum of XLEN over the output streams.
  long long stream_length();
  // Every entry of every output stream (XRANGE), arrival_us 0 (read after the run).
  std::vector<ReceivedEntry> read_streams();
  // Sweeps every bucket until none has a due task (via = bench-drain); returns tasks forwarded.
  long long drain_due();
  // INFO cpu of every primary (and, on a cluster, replica).
  RedisCpu cpu();
  // Calls per command (INFO commandstats) of each primary, in the order of primaries().
  std::vector<std::map<std::string, long long>> calls_per_primary();
  // Pub/sub channels subscribed on the primaries that match `pattern` (PUBSUB CHANNELS, node-local).
  long long channels_subscribed(const std::string& pattern);
  // Waits until the relay's command connection and subscriber are up on every primary (for a
  // cluster relay: its node Relays "<instance>@host:port"). Throws Error on timeout or exit.
  void wait_ready(RelayProcess& relay, std::chrono::milliseconds timeout = std::chrono::milliseconds(15000));

 private:
  TaskTarget(const BenchContext& ctx, int buckets);

  // The output streams to read: one per bucket with bucket streams, else the one stream.
  int stream_count() const { return placement_.bucket_streams() ? placement_.buckets : 1; }
  // FCALL expiry_schedule of task `id`, routed by its slot.
  ClusterClient::Routed schedule_command(const std::string& id, ScheduleMode mode, long long ms) const;
  // Each command routed by its slot; replies in input order. Throws Error on an I/O failure.
  std::vector<Reply> run_all(const std::vector<ClusterClient::Routed>& commands);
  Reply run_one(const std::vector<std::string>& argv, int slot);
  // Runs `argv` on every primary (unrouted).
  void on_every_primary(const std::vector<std::string>& argv);

  BenchContext ctx_;
  TaskPlacement placement_;  // db: the database the tasks are scheduled in (0 on a cluster)
  std::unique_ptr<SyncConnection> single_;
  std::unique_ptr<ClusterClient> cluster_;
};

}  // namespace expiry::bench
