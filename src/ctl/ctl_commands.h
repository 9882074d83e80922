// The expiry-ctl subcommands. Each returns the process exit code for its normal outcomes and
// throws for failures: ConfigError (bad input, exit 2), IoError / ReplyError (Redis, exit 1).
// Results go to stdout, progress and diagnostics to stderr.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ctl/ctl_settings.h"
#include "functions/task_options.h"
#include "producer/task_reads.h"

namespace expiry {

constexpr int kExitOk = 0;
constexpr int kExitRedisError = 1;  // connection failures and error replies
constexpr int kExitUsage = 2;       // usage, configuration and input errors; nothing was written
constexpr int kExitNotPending = 3;  // show, cancel --strict, run-now: the task is not pending
constexpr int kExitOrphansFound = 1;  // check without --repair: orphaned keys were found
// schedule --wait-replicas N: the tasks were written, but fewer than N replicas acknowledged them.
constexpr int kExitNotReplicated = 4;
// schedule --file stopped by SIGINT / SIGTERM (128 + the signal, as shells report it): the
// replies of the tasks sent were read, and how many were written was printed.
constexpr int kExitInterrupted = 130;
constexpr int kExitTerminated = 143;

// schedule --wait-replicas: after the writes, WAIT `replicas` `timeout_ms` on every node written
// to; fewer acknowledgements exit kExitNotReplicated. 0 replicas: no WAIT. `automatic` (through
// Sentinel when --wait-replicas is not given): WAIT for as many replicas as the sentinels see
// healthy. Through Sentinel a shortfall finds the master again and writes again
// (Producer::confirm_writes).
struct ReplicaWait {
  int replicas = 0;
  long long timeout_ms = 1000;
  bool automatic = false;
};

struct ScheduleOptions {
  std::string id;
  std::optional<long long> delay_ms;
  std::optional<long long> at_ms;
  std::optional<std::string> payload;
  std::string payload_file;  // payload read from this file; empty: none
  std::optional<std::string> stream;
  TaskOptions task;  // --if-absent, --debounce-max-ms, --max-late-ms, --traceparent
  ReplicaWait wait;
};

struct RescheduleOptions {
  std::string id;
  std::optional<long long> delay_ms;
  std::optional<long long> at_ms;
};

// The stream and group stats reports on are the target's (ctl_settings.h).
struct StatsOptions {
  bool json = false;
};

struct CheckOptions {
  bool repair = false;  // delete the orphans found (each re-checked atomically)
  bool json = false;
  int examples = 10;    // orphan keys listed in the report
};

// tail reads the target's stream (ctl_settings.h).
struct TailOptions {
  bool json = false;         // one JSON object per entry (format_stream_entry_json) instead of a text line
  long long count = 0;       // stop after this many entries; 0: no limit
  long long timeout_ms = 0;  // stop after this long without an entry; 0: never
  std::string from = "$";    // "$": only new entries; an entry id ("0": everything) to start after
};

// list: the pending tasks in due order, one bounded page per call (docs: README, expiry-ctl);
// kMaxListCount is the Producer's (producer/task_reads.h).
struct ListOptions {
  long long count = 100;                  // tasks per page, 1..kMaxListCount
  bool json = false;                      // one JSON document {"tasks": [...], "count": N, "next_cursor": cursor|null}
  std::string cursor;                     // continue after the page that printed it; empty: from the start
  std::optional<std::string> due_before;  // only tasks due before: epoch ms, or "+MS" from now
};

// Validates the task locally (nothing is sent when it is invalid), then schedules it.
int run_schedule(const CtlTarget& target, const ScheduleOptions& options);
// Validates every line of `path` ("-": stdin) first; writes nothing unless all are valid.
// SIGINT / SIGTERM while writing: sends no further window, reads the replies of those sent,
// prints how many tasks were written and returns kExitInterrupted / kExitTerminated.
// With `wait`, the replicas are waited for once every task was written.
int run_bulk_schedule(const CtlTarget& target, const std::string& path, const ReplicaWait& wait = {});
// Moves a pending task, keeping its payload and stream; kExitNotPending when it is not pending.
int run_reschedule(const CtlTarget& target, const RescheduleOptions& options);
int run_cancel(const CtlTarget& target, const std::string& id, bool strict);
int run_show(const CtlTarget& target, const std::string& id, bool json);
int run_stats(const CtlTarget& target, const StatsOptions& options);
int run_load_functions(const CtlTarget& target);
// Scans the namespace for trigger keys and shadow hashes whose id is not scheduled (orphans),
// reports them and, with --repair, deletes them. kExitOk when there are none or they were
// deleted, kExitOrphansFound when some were found and not deleted.
int run_check(const CtlTarget& target, const CheckOptions& options);
// Prints one line per entry (inspector/entry_format.h) until `count` entries, `timeout_ms` of
// quiet, or stdout is closed. When the stream does not exist yet, says so once on stderr, then
// waits.
int run_tail(const CtlTarget& target, const TailOptions& options);

// dead: the dead-letter streams (NS:{B}:dead per bucket, else --dead-stream, default
// <stream>:dead). An entry is "<entry-id>", or "<bucket>/<entry-id>" with bucket streams.
struct DeadListOptions {
  long long count = 100;  // oldest first, 1..kMaxListCount
  bool json = false;
  std::string dead_stream;
};
struct DeadPurgeOptions {
  std::vector<std::string> entries;
  bool all = false;                        // everything there when the purge starts
  std::optional<long long> older_than_ms;  // entries whose id time is older than this
  std::string dead_stream;
};
struct DeadReplayOptions {
  std::vector<std::string> entries;
  bool all = false;  // everything there when the replay starts
  long long delay_ms = 0;
  std::string dead_stream;
};
int run_dead_list(const CtlTarget& target, const DeadListOptions& options);
// kExitNotPending when the entry is not there.
int run_dead_show(const CtlTarget& target, const std::string& entry, bool json, const std::string& dead_stream);
// XDEL in batches of at most 500; named entries already gone: kExitNotPending.
int run_dead_purge(const CtlTarget& target, const DeadPurgeOptions& options);
// One FCALL expiry_replay_dead per entry: the task scheduled again and the entry deleted
// atomically; named entries already gone: kExitNotPending.
int run_dead_replay(const CtlTarget& target, const DeadReplayOptions& options);

// The pending tasks a bulk run-now or cancel acts on. Times are epoch ms, or "+MS" for MS from
// now on the Redis clock (parse_due_before); bounds are exclusive. At least one must be set.
struct TaskRange {
  std::optional<std::string> prefix;      // ids starting with it (not empty)
  std::optional<std::string> due_before;  // due < this
  std::optional<std::string> due_after;   // due > this (cancel only)
};
// Makes one pending task due now (its payload, stream and attempt kept) and prints the
// previous and new due times; kExitNotPending when it is not pending.
int run_run_now(const CtlTarget& target, const std::string& id);
// Makes every matching task not yet due due now, bucket by bucket, in calls of at most
// kRangeCallLimit members (producer/bucket_calls.h); prints the count promoted.
int run_run_now_range(const CtlTarget& target, const TaskRange& range);
// Cancels every matching pending task, bucket by bucket, in calls of at most kRangeCallLimit
// members; prints the count cancelled.
int run_cancel_range(const CtlTarget& target, const TaskRange& range);
// Pauses every bucket of the namespace for `for_ms` (0: until resumed) and prints the end, the
// bucket count and the tasks held (pending, overdue).
int run_pause(const CtlTarget& target, long long for_ms);
// Ends the pause of every bucket; prints how many were paused and the overdue tasks that are
// now forwarded.
int run_resume(const CtlTarget& target);

// Prints up to options.count pending tasks after the cursor in due order (score, then id bytes),
// merged across the buckets; when more follow, the cursor to continue with (stderr in text,
// "next_cursor" in JSON). Each bucket is read with bounded ZRANGEs (producer/task_lister.h).
int run_list(const CtlTarget& target, const ListOptions& options);

}  // namespace expiry
