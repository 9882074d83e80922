// The Inspector: typed reads and operator actions on a namespace, beside the Producer, for
// every face (expiry-ctl, expiry-api and its console). Each call returns a struct; the faces
// only format it. It is the one place outside src/producer that uses Producer::client(). Its
// reads are defined by concept: inspector.cpp (stats, dead letters, range step, audit trail),
// overview_reads.cpp, task_state.cpp, recurring_reads.cpp, orphan_scan.cpp, stream_reads.cpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "functions/function_library.h"
#include "functions/stream_entry.h"
#include "inspector/audit_trail.h"
#include "inspector/dead_letter_list.h"
#include "inspector/dead_letter_refs.h"
#include "inspector/orphan_scan.h"
#include "inspector/overview.h"
#include "inspector/recurring_summary.h"
#include "inspector/task_state.h"
#include "producer/recurring_schedules.h"

namespace expiry {

class Producer;
class RoutedClient;
struct RangeFilter;

// One bucket's schedule and pause flag.
struct BucketStats {
  int bucket = 0;
  long long pending = 0;                  // ZCARD of the schedule
  long long overdue = 0;                  // due at or before NamespaceStats::now_ms
  std::optional<long long> next_due_ms;   // the schedule's head, if any
  bool pause_known = true;                // false: the Redis user may not read the flag (NOPERM)
  bool pause_flag = false;                // the flag key exists (even a timed one whose end has come)
  std::optional<long long> paused_until;  // paused now: its end in ms, 0 until resumed
};

// One default stream (layout.streams()) and the consumer group asked for on it.
struct StreamStats {
  std::string key;
  long long length = 0;
  bool exists = false;
  bool group_exists = false;             // the group reads this stream
  std::optional<long long> group_lag;    // nullopt: unknown to Redis, or no group
  std::optional<long long> group_pending;
};

// A namespace at one instant of its Redis clock (bucket 0's node: a cluster's share a host clock).
struct NamespaceStats {
  long long now_ms = 0;
  std::vector<BucketStats> buckets;  // every bucket, in order
  // Totals over the buckets.
  long long pending = 0;
  long long overdue = 0;
  std::optional<long long> next_due_ms;
  bool pause_known = true;     // every bucket's flag was read
  long long paused_buckets = 0;  // buckets paused now (of those whose flag was read)
  long long pause_flags = 0;     // buckets whose flag key exists
  // When a bucket is paused: the latest end, or 0 when one is paused until resumed.
  std::optional<long long> paused_until;
  // Read only by stats(group): each default stream, and the totals over them.
  std::vector<StreamStats> streams;
  long long stream_length = 0;
  size_t streams_existing = 0;
  size_t groups_found = 0;
  std::optional<long long> group_lag;      // summed; nullopt as soon as one is unknown, or no group
  std::optional<long long> group_pending;  // nullopt when no stream has the group
};

// The console's overview: the stats, and read after them (overview.h) the last minute's activity,
// the consumer groups, the dead letters per reason and the relays connected now.
struct Overview {
  NamespaceStats stats;
  std::optional<ActivitySample> activity;               // nullopt: a stream could not be read
  std::optional<std::vector<ConsumerGroupInfo>> groups;  // by name; nullopt: XINFO refused
  DeadCounts dead;
  std::optional<RelayInfo> relays;                       // nullopt: PUBSUB refused, or no node list
};

// A dead letter read whole: its entry and fields, in stream order.
struct DeadLetter {
  DeadRef ref;
  std::vector<std::pair<std::string, std::string>> fields;

  std::optional<std::string> field(std::string_view name) const;
};

// What replaying one dead letter did.
struct DeadReplay {
  enum class Outcome {
    Replayed,         // the task is scheduled again and the entry deleted, atomically
    Gone,             // the entry was replayed or purged meanwhile
    NoTaskId,         // the entry holds no valid task id: left in place
    OutsideTaskSlot,  // on a cluster, the entry is not in its task's bucket's slot: left in place
  };
  Outcome outcome = Outcome::Gone;
  std::string task_id;  // set unless NoTaskId
  int task_bucket = 0;  // set unless NoTaskId
  long long due_ms = 0;  // Replayed: when the task is due
  bool replaced = false;  // Replayed: a pending task of that id was replaced
};

// Which bulk action a range step takes (expiry_cancel_range, expiry_run_now_range).
enum class RangeAction {
  Cancel,  // the matching tasks are removed
  RunNow,  // the matching tasks not yet due are made due now
};

// An entry read from default stream `stream` (an index of TaskPlacement::streams()).
struct StreamArrival {
  size_t stream = 0;
  StreamEntry entry;
};

class Inspector {
 public:
  // `producer` must outlive the Inspector. `dead_stream`: the single-bucket dead stream (empty:
  // <stream>:dead), as dead_streams() takes it.
  explicit Inspector(Producer& producer, const std::string& dead_stream = "");

  // Pending, overdue, head and pause flag of every bucket, in one pipelined batch. A flag the
  // Redis user may not read is pause_known = false, not an error. Throws IoError / ReplyError
  // (naming the command) for any other failed read.
  NamespaceStats stats();
  // As stats(), and in the same batch each default stream's length and consumer group `group`.
  NamespaceStats stats(const std::string& group);

  // The dead-letter streams of the namespace.
  const std::vector<DeadStream>& dead_streams() const { return dead_; }
  // The entries `texts` name (format_dead_ref's form). Throws ConfigError, naming the first
  // that does not parse.
  std::vector<DeadRef> parse_dead_refs(const std::vector<std::string>& texts) const;
  // The oldest `limit` (> 0) dead letters across the streams (list_dead_letter_summaries).
  DeadLetterList list_dead_letters(long long limit);
  // Each entry of `refs` read whole (one XRANGE id id each, pipelined); nullopt for those gone.
  std::vector<std::optional<DeadLetter>> read_dead_letters(const std::vector<DeadRef>& refs);
  // Up to `count` entries of dead stream `stream` (an index of dead_streams()) from `start` to
  // `end` (XRANGE bounds: "-", "+", an id, or "(id"), read whole, oldest first.
  std::vector<DeadLetter> dead_letter_range(size_t stream, const std::string& start, const std::string& end,
                                            long long count);
  // The newest entry id of dead stream `stream`, or nullopt when it is empty.
  std::optional<std::string> newest_dead_letter_id(size_t stream);
  // Replays `entry` (one FCALL expiry_replay_dead: the task scheduled `delay_ms` from now and the
  // entry deleted, atomically).
  DeadReplay replay_dead_letter(const DeadLetter& entry, long long delay_ms);
  // Deletes the entries of `refs` (XDEL, pipelined): per entry, true if it was there.
  std::vector<bool> purge_dead_letters(const std::vector<DeadRef>& refs);

  // One bounded call of a bulk action on bucket `bucket`: at most `limit` members examined from
  // library cursor `step` (empty: the start). RangeResult::cursor is empty when the bucket is done.
  RangeResult range_step(RangeAction action, int bucket, const RangeFilter& filter, const std::string& step,
                         int limit);

  // The namespace's audit trail, keeping at most `max_entries` records.
  AuditTrail audit_trail(long long max_entries);

  // stats(), then the activity of the last minute from the default streams, the consumer groups
  // and their consumers (XINFO), the dead letters per reason and the relays (PUBSUB CHANNELS on
  // each primary). What the user may not read is nullopt; throws IoError for a lost connection,
  // ReplyError for a refused schedule read or XLEN or XREVRANGE of a dead stream.
  Overview overview();
  // The tasks due in each bar of kTimelineRanges, the overdue and those due beyond the longest
  // range: ZCOUNTs only, one pipelined batch.
  Timeline timeline();
  // Where task `id` is (task_state.h): one show(), then, unless pending, XINFO GROUPS and the
  // newest entries of its bucket's default and dead streams, and XPENDING per group.
  TaskState task_state(const std::string& id);

  // The recurring schedules of the namespace, to read and write (producer/recurring_schedules.h).
  RecurringSchedules recurring_schedules();
  // Up to `limit` (> 0) recurring schedules in brief, bucket by bucket (expiry_v2_recur_list
  // pages of 100, one expiry_v2_recur_get each); a schedule deleted meanwhile is left out.
  RecurringSummaries recurring_summaries(long long limit);

  // Walks every node holding data (one Redis, or each primary of a cluster) with SCAN MATCH
  // NS:{*}:t* COUNT 1000, bounded work per call, and reads for each task key found whether its id
  // is scheduled and the key still there at one instant (MULTI/EXEC, or a read-only EVAL on a
  // cluster); with options.repair deletes each orphan in an EVAL that checks ZSCORE again.
  // `progress` is called after each SCAN page with the report so far.
  OrphanReport scan_orphans(const OrphanScanOptions& options,
                            const std::function<void(const OrphanReport&)>& progress = {});

  // Whether default stream `stream` exists (EXISTS); nullopt when the user may not ask.
  std::optional<bool> stream_exists(size_t stream);
  // The id of each default stream's newest entry, "0-0" for an empty one: reading after it
  // returns exactly the entries added from now on (unlike "$").
  std::vector<std::string> newest_entry_ids();
  // Up to `count` entries of each default stream after `after` (one id per stream, as
  // newest_entry_ids), plain XREAD without a group. One stream: one XREAD that blocks up to
  // `block_ms` for an entry. Bucket streams: one XREAD each without blocking, pipelined per node
  // (a multi-stream XREAD is CROSSSLOT on a cluster), sorted by entry id.
  std::vector<StreamArrival> read_streams_after(const std::vector<std::string>& after, long long count,
                                                long long block_ms);
  // The Redis clock (TIME) of the node holding task `id`, in ms; nullopt when TIME is refused.
  std::optional<long long> clock_of_task(const std::string& id);

 private:
  NamespaceStats read_stats(const std::string* group);

  Producer& producer_;
  RoutedClient& redis_;
  std::vector<DeadStream> dead_;
};

}  // namespace expiry
