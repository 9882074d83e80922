// What every scenario of expiry-bench shares: where Redis and the binaries are, the namespace the
// bench writes to, the scenario sizes (quick or full), and the wall clock the bench compares with
// Redis's (same host, so both read CLOCK_REALTIME).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/redis_url.h"
#include "functions/key_layout.h"

namespace expiry::bench {

struct BenchSizes {
  int steady_rate = 1000;             // tasks scheduled per second
  int steady_seconds = 30;
  size_t steady_producers = 1;        // connections scheduling in parallel, one call at a time each
  size_t steady_backdrop = 1000000;   // far-future pending tasks in the same schedule
  size_t steady_ttl_keys = 100000;    // unrelated keys with a TTL
  long long steady_grace_ms = 10000;  // how long after the last due time a system may still forward
  size_t burst_tasks = 100000;        // all due in the same millisecond
  size_t backlog_tasks = 500000;      // overdue before the relay starts
  size_t bulk_tasks = 1000000;        // expiry-ctl schedule --file, and the pipelined ceiling
  size_t cancel_tasks = 100000;       // per mode (unpipelined, pipelined)
  int idle_seconds = 10;
  size_t kill_tasks = 10000;          // due evenly over kill_seconds; the relay killed -9 half-way
  int kill_seconds = 10;
  std::vector<int> ceiling_depths = {1, 4, 16};  // sweep calls per round trip, ceiling runs
  // {tasks per call, calls per round trip} of the bare-script ceiling runs: the relay's batch
  // and pipeline, and 1000 per call, which blocks Redis for several ms per call.
  std::vector<std::pair<int, int>> bare_ceilings = {{100, 4}, {1000, 1}};
  int drain_rounds = 1;                          // burst/backlog: interleaved rounds of every system
  // cluster scenario, run once on one Redis and once on the cluster
  int cluster_rate = 1000;              // steady: tasks scheduled per second
  int cluster_seconds = 30;
  size_t cluster_backdrop = 200000;     // far-future pending tasks, spread over the buckets
  long long cluster_grace_ms = 10000;   // as steady_grace_ms
  size_t cluster_burst_tasks = 100000;  // drain: all due in the same millisecond
  size_t deadline_tasks = 100000;       // deadline scenario: bulk cancel, held-task resume, claim cost
  size_t recur_schedules = 100000;      // recur scenario: schedules, each firing once a minute
  int recur_minutes = 3;                // recur: the measured window
  long long recur_grace_ms = 5000;      // recur: how long after the window the relay may still forward
};

BenchSizes full_sizes();
BenchSizes quick_sizes();

struct BenchContext {
  RedisEndpoint redis;
  std::string redis_url;   // as given, passed on to the relay and expiry-ctl
  // The tls_* and sentinel_* settings as flags, passed on with redis_url.
  std::vector<std::string> tls_flags;
  std::string relay_bin;   // path of expiry-relay
  std::string ctl_bin;     // path of expiry-ctl
  std::string canceller_bin;  // path of order-canceller (the cluster scenario's idle consumer)
  std::string work_dir;    // logs and generated files
  KeyLayout keys{"bench"};
  std::string stream = "bench:stream";
  std::string group = "workers";
  BenchSizes sizes;
  bool quick = false;
  size_t payload_bytes = 100;    // every task's payload
  size_t pipeline_depth = 128;   // FCALLs per round trip when the bench itself writes tasks
  std::vector<std::string> relay_extra_flags;  // appended to the relay's own flags (not the baselines')
  std::set<std::string> steady_systems;        // role names the steady scenario runs
  pid_t redis_pid = 0;           // INFO server process_id, for the machine-load figures
  std::string cluster_url;       // cluster scenario: any node of a Redis Cluster (its data is flushed)
  int cluster_buckets = 64;      // cluster scenario: buckets on the cluster
  int standalone_buckets = 1;    // cluster scenario: buckets on the single Redis
  std::string recur_rule = "every";  // recur scenario: "every" (@every 1m, anchors spread) or "cron" (S * * * * *)
  size_t recur_instants = 0;     // recur: instants per expiry_v2_recur_set (0: 9 + i mod 24, staggered refills)
};

// The task id of task `index` of a run: "<prefix><index>".
std::string task_id(const std::string& prefix, size_t index);
// The index of `id` if it is "<prefix><digits>", else -1.
long long task_index(const std::string& prefix, const std::string& id);
// A JSON payload of exactly `bytes` bytes (at least 32) naming the task.
std::string task_payload(const std::string& id, size_t bytes);

// Milliseconds / microseconds since the epoch, CLOCK_REALTIME: the clock Redis's TIME reads.
long long wall_ms();
long long wall_us();
// Sleeps until wall_ms() >= at_ms (spins for the last millisecond).
void sleep_until_wall_ms(long long at_ms);

}  // namespace expiry::bench
