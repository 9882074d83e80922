// TaskLedger: the chaos test's record of what it asked of Redis (schedules, reschedules,
// cancels, payments) with what Redis answered, and the check of the final stream and order
// statuses against that record. Pure: no I/O.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace expiry::test {

// One scheduling of a task id. A reschedule replaces the live instance by a new one.
struct TaskInstance {
  enum class State {
    Live,       // must be in the stream exactly once, with this due_ms and payload
    Replaced,   // a reschedule replaced it before it fired: must never be in the stream
    Cancelled,  // expiry_cancel removed it: must never be in the stream
  };
  long long due_ms = 0;
  std::string payload;
  State state = State::Live;
};

struct LedgerReport {
  size_t tasks = 0;             // task ids scheduled
  size_t expected_entries = 0;  // Live instances
  size_t cancelled = 0;         // Cancelled instances
  size_t replaced = 0;          // Replaced instances
  size_t entries = 0;           // stream entries checked
  size_t lost = 0;              // Live instances not in the stream
  size_t duplicated = 0;        // extra stream entries of a Live instance
  size_t fired_cancelled = 0;   // entries of a Cancelled instance
  size_t fired_replaced = 0;    // entries at a Replaced instance's (old) due time
  size_t payload_mismatch = 0;  // payload not byte-identical, or missing_payload set
  size_t early = 0;             // fired_ms < due_ms
  size_t unexpected = 0;        // entries of no scheduled instance (unknown id or due time)
  size_t anomalies = 0;         // replies that contradict the ledger (see TaskLedger)
  long long max_lateness_ms = 0;
  std::vector<std::string> problems;  // the first few, human-readable

  bool ok() const {
    return lost == 0 && duplicated == 0 && fired_cancelled == 0 && fired_replaced == 0 && payload_mismatch == 0 &&
           early == 0 && unexpected == 0 && anomalies == 0;
  }
};

struct OrderReport {
  size_t orders = 0;
  size_t paid = 0;                 // payment accepted: must stay paid
  size_t cancelled = 0;            // unpaid and cancelled, as required
  size_t wrongly_cancelled = 0;    // paid orders cancelled
  size_t missed = 0;               // unpaid orders not cancelled (their timeout was not handled)
  size_t missed_dead_lettered = 0; // of the missed: the timeout entry was dead-lettered
  std::vector<std::string> problems;

  bool ok() const { return wrongly_cancelled == 0 && missed == 0; }
};

// Contracts:
// - `redis_now_ms` arguments are an upper bound of the Redis clock when the reported call ran
//   (e.g. a TIME sent after it in the same pipeline). A task cannot have fired before its due
//   time, so a reply saying a task whose due time is later than that bound was no longer pending
//   is an anomaly: the task vanished from the schedule.
// - Not thread-safe.
class TaskLedger {
 public:
  static constexpr size_t kMaxProblems = 20;

  // expiry_schedule answered {due_ms, replaced}. replaced=0 while an instance was live means
  // that instance had fired: it stays expected in the stream, and a new one starts.
  void scheduled(const std::string& id, const std::string& payload, long long due_ms, bool replaced,
                 long long redis_now_ms);
  // expiry_cancel answered `removed` (1: the live instance was cancelled; 0: none was pending).
  void cancel_answered(const std::string& id, bool removed, long long redis_now_ms);
  // order_pay answered `status_before` ("pending": the order is paid now).
  void pay_answered(const std::string& order_key, const std::string& status_before);

  bool has_live(const std::string& id) const;
  // Due time of the live instance (the latest), or -1.
  long long live_due_ms(const std::string& id) const;
  bool paid(const std::string& order_key) const;
  size_t task_count() const { return tasks_.size(); }
  const std::unordered_map<std::string, std::vector<TaskInstance>>& tasks() const { return tasks_; }

  // Checks the stream's entries (field maps with at least id, payload, due_ms, fired_ms).
  LedgerReport check_stream(const std::vector<std::map<std::string, std::string>>& entries) const;
  // Checks the final status of every order key (task id) the ledger knows; `dead_lettered`
  // holds the task ids found in the dead-letter stream.
  OrderReport check_orders(const std::unordered_map<std::string, std::string>& status_by_order,
                           const std::vector<std::string>& dead_lettered) const;

 private:
  void note_anomaly(std::string what);

  std::unordered_map<std::string, std::vector<TaskInstance>> tasks_;
  std::unordered_map<std::string, bool> paid_;  // order key -> payment accepted
  size_t anomalies_ = 0;
  std::vector<std::string> anomaly_text_;
};

}  // namespace expiry::test
