// Producer: schedules, moves, cancels and reads tasks and recurring schedules of one namespace
// (docs/protocol.md) on a single Redis, a Redis Cluster or through Sentinel, told apart by the
// server, so that no caller chooses a bucket, a slot or a connection. The installed API for C++
// services (include/expiry/producer/, find_package(ExpiryRelay), target ExpiryRelay::producer);
// expiry-ctl, order-sim and the bench use it too. Its recurring-schedule calls are defined in
// expiry_producer_recur (producer_recurring.cpp), which a program of the project links for them.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../base/errors.h"
#include "../functions/task_values.h"
#include "recurring.h"
#include "replica_confirmation.h"
#include "schedule_feed.h"
#include "task.h"
#include "task_reads.h"

namespace expiry {

class RoutedClient;     // io/sync/routed_client.h (not installed)
struct ProducerTarget;  // producer/producer_target.h (not installed)
struct TaskPlacement;   // producer/task_placement.h (not installed)

// A bulk range walk's totals over every bucket, and its progress after each call.
struct RangeTotals {
  long long acted = 0;  // cancelled, or promoted
  long long examined = 0;
};
struct RangeProgress {
  RangeTotals so_far;
  int bucket = 0;   // the bucket being walked, 0-based
  int buckets = 1;
};
using RangeProgressFn = std::function<void(const RangeProgress&)>;

// Contracts:
// - Construction connects, finds out whether the server is a cluster node (INFO cluster) and
//   agrees on the namespace's bucket count with NS:buckets (writing it where the namespace
//   needs it: functions/bucket_plan.h). Each call then goes to the node of the task's bucket.
// - Invalid input throws ConfigError before anything is sent; a refused call ReplyError; a
//   lost connection IoError (through Sentinel a command refused by a demoted master, or a safe
//   one after a lost connection, is sent again to the new master: io/sync/routed_client.h).
// - A task that is not pending is an answer, not an error: nullopt, false or pending = false.
// - Blocking and not thread-safe: one Producer per thread.
class Producer {
 public:
  // `settings` by the names every program of the project reads in its config file: redis_url
  // (default redis://127.0.0.1:6379/0), password_file, namespace (default expiry), buckets,
  // stream, tls_ca_cert_file, tls_ca_cert_dir, tls_cert_file, tls_key_file, tls_server_name,
  // tls_insecure, sentinel, sentinel_master, sentinel_password_file (README, "Running the relay").
  // A bad setting throws ConfigError naming it by its flag (--redis-url).
  explicit Producer(const std::map<std::string, std::string>& settings,
                    const ReplicaConfirmation& confirmation = {});
  // The same from a braced list, Producer({{"redis_url", url}}): a one-pair list would otherwise
  // also read as a map built from two `const char*` iterators.
  explicit Producer(std::initializer_list<std::pair<const std::string, std::string>> settings,
                    const ReplicaConfirmation& confirmation = {});
  // For the project's programs, which resolve their own settings into a ProducerTarget.
  explicit Producer(const ProducerTarget& target, const ReplicaConfirmation& confirmation = {});
  ~Producer();
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  const std::string& ns() const;
  bool cluster() const;
  int buckets() const;

  // expiry_schedule: replaces a pending task of the same id (if_absent keeps it; debounce keeps
  // its first schedule's bound).
  ScheduleResult schedule(const Task& task);
  // Every task, in expiry_schedule_many calls of one bucket each (expiry_schedule calls for a
  // Redis user who may not call it); results in input order. All are validated first. A refused
  // call throws ReplyError naming its task and how many tasks were written.
  std::vector<ScheduleResult> schedule_many(const std::vector<Task>& tasks);
  // What schedule_many does, for an input too large to hold: tasks pulled from `feed` and
  // answered to it, in pipelined round trips (schedule_feed.h).
  void schedule_stream(ScheduleFeed& feed);
  // Moves a pending task, keeping its payload and stream; nullopt when it is not pending.
  std::optional<RescheduleResult> reschedule(const std::string& id, ScheduleMode mode, long long ms);
  // True when the task was pending and is cancelled.
  bool cancel(const std::string& id);
  // Every pending task `filter` matches (at least one bound or a prefix), bucket by bucket in
  // bounded calls (expiry_cancel_range); `progress` after each call.
  RangeTotals cancel_range(const RangeFilter& filter, const RangeProgressFn& progress = {});
  // Makes one pending task due now (payload, stream and attempt kept).
  RunNowResult run_now(const std::string& id);
  // Makes every matching task not yet due due now (filter.after_ms must be unset).
  RangeTotals run_now_range(const RangeFilter& filter, const RangeProgressFn& progress = {});
  // Pauses every bucket for `duration` (zero: until resumed): nothing is forwarded meanwhile.
  // value: the latest end of the pause (0: until resumed); pending and overdue summed.
  PauseResult pause(std::chrono::milliseconds duration);
  // Ends the pause of every bucket. value: how many buckets were paused.
  PauseResult resume();

  // Confirms the writes made since the last confirmation on the replicas the confirmation of
  // the constructor asks for (replica_confirmation.h): WAIT on every node written to. Through
  // Sentinel a shortfall calls `on_shortfall`, finds the master again (a failover in progress
  // is waited out) and calls `write_again`, which must repeat the writes (schedule replaces a
  // task by id); at most kConfirmAttempts writes in all. Returns the last WAIT's count; a
  // shortfall is for the caller to judge.
  ReplicaAcks confirm_writes(const std::function<void()>& write_again,
                             const std::function<void(const ReplicaAcks&)>& on_shortfall = {});

  // The task as stored, and the clock of its node.
  TaskDetails show(const std::string& id);
  // A page of pending tasks in due order (score, then id bytes), merged across the buckets,
  // each bucket read in bounded steps; next_cursor continues it.
  TaskPage list(const ListQuery& query);
  // The stream and payload size of listed tasks (and their payload's first
  // `payload_head_bytes` bytes, when not 0), read 500 tasks per round trip; `each` receives
  // them in order as they come.
  void list_details(const std::vector<ListedTask>& tasks, size_t payload_head_bytes,
                    const std::function<void(size_t index, const ListedTaskDetails&)>& each);
  // The Redis clock (TIME) of bucket 0's node, in ms (the nodes of a cluster share a host clock).
  long long now_ms();

  // Recurring schedules (recurring.h), as `expiry-ctl recur set|show|delete|pause|resume|list`
  // and /v1/schedules handle them: the next instants are computed here from the rule in its
  // zone (the system's tzdata) and written by the function library in one call. A bad rule,
  // zone, time, id or bound throws ConfigError with nothing written; an id that is a pending
  // one-off task too.
  // Creates or atomically replaces schedule spec.id: an occurrence already due still fires under
  // the old rule, a pause is kept.
  RecurringSetResult set_recurring(const RecurringSpec& spec);
  // The schedule with its next `next_count` (0..1000) occurrences, or nullopt if there is none.
  std::optional<RecurringDetails> show_recurring(const std::string& id, int next_count = 5);
  // Deletes the schedule and its pending occurrence; false when there was none.
  bool delete_recurring(const std::string& id);
  // Nothing fires until resumed (its pending occurrence is removed).
  RecurringStateResult pause_recurring(const std::string& id);
  // Arms it again at its next occurrence from now (Redis's clock): those in the pause never fire.
  RecurringStateResult resume_recurring(const std::string& id);
  // Calls `visit` with each schedule, bucket by bucket, until it returns false.
  void for_each_recurring(const std::function<bool(const RecurringDetails&)>& visit, int next_count = 5);

  // For the project's own tools, which send other commands on the same connection.
  RoutedClient& client();
  const TaskPlacement& placement() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace expiry
