// Counters of one relay process (exported as metrics later; logged on exit).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace prometheus {
class Histogram;
}

namespace expiry {

struct RelayStats {
  uint64_t events_received = 0;      // expired keyevents seen
  uint64_t events_ignored = 0;       // other databases, other namespaces, non-trigger keys
  uint64_t events_invalid_id = 0;    // trigger keys of this namespace whose id the library rejects
  uint64_t events_other_db = 0;      // trigger keys of this namespace expiring in another database
  uint64_t forwarded_event = 0;      // tasks forwarded by an expired event
  uint64_t forwarded_sweep = 0;      // tasks forwarded by the sweep
  uint64_t forwarded_already_due = 0;  // of those, tasks due already when scheduled (no lateness)
  uint64_t claims_lost = 0;          // event claims that found the task already gone (another relay/sweep won)
  uint64_t claims_not_due = 0;       // stale events: the task was rescheduled later
  uint64_t claims_deferred = 0;      // events left to the sweep because too many claims were in flight
  uint64_t events_to_draining_sweep = 0;  // events not claimed: a sweep was draining due tasks already
  uint64_t claim_errors = 0;
  uint64_t claims_paused = 0;             // event claims refused because the bucket is paused
  uint64_t dead_lettered_late_event = 0;  // tasks dead-lettered (reason late) by an event claim
  uint64_t dead_lettered_late_sweep = 0;  // ... by the sweep
  uint64_t sweep_batches = 0;
  uint64_t sweep_errors = 0;
  uint64_t sweeps_migrating = 0;     // sweeps that stopped at a task whose slot was moving to another node
  uint64_t sweep_time_us = 0;        // summed round-trip time of sweep calls
  uint64_t wakeups = 0;              // new-earliest-task notices received for this database (or naming none)
  uint64_t health_probe_failures = 0;
  uint64_t recur_refills = 0;        // recurring schedules given more instants (expiry_v2_recur_refill)
  uint64_t recur_refill_errors = 0;  // refill calls that failed, and stored rules that do not read back
  uint64_t group_recreated = 0;      // the group was missing at a reconnect after this relay had seen it
  // Gauges of one bucket's schedule, as of its last sweep.
  struct ScheduleGauges {
    int64_t pending = 0;             // tasks in the schedule
    int64_t overdue = 0;             // of which due and not yet forwarded
    int64_t oldest_overdue_ms = 0;   // age of the earliest overdue task (0 if none, or paused)
    int64_t paused_until_ms = -1;    // -1: not paused; 0: until resumed; else the pause's end
  };
  std::map<int, ScheduleGauges> schedules;  // by bucket; every bucket this process sweeps
  // Retention of one stream the relay forwards into (StreamTrimmer).
  struct StreamTrims {
    uint64_t trimmed = 0;           // entries removed by expiry_trim
    uint64_t skipped_no_group = 0;  // trim passes that found no consumer group (nothing trimmed)
    uint64_t trim_errors = 0;       // expiry_trim calls that failed
    int64_t length = 0;             // XLEN after the last trim call
  };
  std::map<std::string, StreamTrims> streams;  // by stream key
  // Whether expired keyevents are on (notify-keyspace-events has E and x, or A), as the last
  // check at a (re)connect found, by node relay (its instance name; one entry on a single Redis).
  // false also when the check could not tell (CONFIG GET refused).
  std::map<std::string, bool> keyspace_notifications;
  prometheus::Histogram* lateness = nullptr;  // seconds from due to forwarded; owned by Metrics

  // Over every bucket: the sums of pending and overdue, the oldest overdue age.
  int64_t pending() const;
  int64_t overdue() const;
  int64_t oldest_overdue_ms() const;
  // True once every node relay has checked, and each found expired keyevents on.
  bool keyspace_notifications_on() const;
  // Buckets whose last sweep said they are paused.
  int64_t paused_buckets() const;

  // A forwarded task's lateness; negative (the library's -1) counts a task that was already due
  // when scheduled, which has no lateness and stays out of the histogram.
  void observe_lateness_ms(long long ms);
  std::string summary() const;
};

}  // namespace expiry
