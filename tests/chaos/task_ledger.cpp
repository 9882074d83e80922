// TaskLedger implementation: instances per task id, matched to stream entries by due time.
#include "chaos/task_ledger.h"
#include "functions/stream_entry.h"

#include <algorithm>
#include <set>
#include <string>

namespace expiry::test {
namespace {

TaskInstance* live_instance(std::vector<TaskInstance>& instances) {
  for (auto it = instances.rbegin(); it != instances.rend(); ++it) {
    if (it->state == TaskInstance::State::Live) return &*it;
  }
  return nullptr;
}

const std::string& field(const std::map<std::string, std::string>& entry, const std::string& name) {
  static const std::string kEmpty;
  auto it = entry.find(name);
  return it == entry.end() ? kEmpty : it->second;
}

long long to_ms(const std::string& text) {
  try {
    return text.empty() ? -1 : std::stoll(text);
  } catch (...) {
    return -1;
  }
}

void add_problem(std::vector<std::string>& problems, std::string what) {
  if (problems.size() < TaskLedger::kMaxProblems) problems.push_back(std::move(what));
}

}  // namespace

void TaskLedger::note_anomaly(std::string what) {
  ++anomalies_;
  if (anomaly_text_.size() < kMaxProblems) anomaly_text_.push_back(std::move(what));
}

void TaskLedger::scheduled(const std::string& id, const std::string& payload, long long due_ms, bool replaced,
                           long long redis_now_ms) {
  auto& instances = tasks_[id];
  TaskInstance* live = live_instance(instances);
  if (replaced) {
    if (live == nullptr) {
      note_anomaly("schedule of " + id + " replaced a task the ledger does not know as pending");
    } else {
      live->state = TaskInstance::State::Replaced;
    }
  } else if (live != nullptr && live->due_ms > redis_now_ms) {
    note_anomaly("schedule of " + id + " found no pending task, but the live one was due at " +
                 std::to_string(live->due_ms) + " and Redis time was at most " + std::to_string(redis_now_ms));
  }
  // With replaced=0 a live instance fired before this schedule: it stays expected.
  instances.push_back(TaskInstance{due_ms, payload, TaskInstance::State::Live});
}

void TaskLedger::cancel_answered(const std::string& id, bool removed, long long redis_now_ms) {
  auto& instances = tasks_[id];
  TaskInstance* live = live_instance(instances);
  if (removed) {
    if (live == nullptr) {
      note_anomaly("cancel of " + id + " removed a task the ledger does not know as pending");
    } else {
      live->state = TaskInstance::State::Cancelled;
    }
    return;
  }
  if (live != nullptr && live->due_ms > redis_now_ms) {
    note_anomaly("cancel of " + id + " found no pending task, but it was due at " + std::to_string(live->due_ms) +
                 " and Redis time was at most " + std::to_string(redis_now_ms));
  }
  // Not removed: it fired already and stays expected in the stream.
}

void TaskLedger::pay_answered(const std::string& order_key, const std::string& status_before) {
  if (status_before == "pending") paid_[order_key] = true;
}

bool TaskLedger::has_live(const std::string& id) const { return live_due_ms(id) >= 0; }

long long TaskLedger::live_due_ms(const std::string& id) const {
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return -1;
  for (auto inst = it->second.rbegin(); inst != it->second.rend(); ++inst) {
    if (inst->state == TaskInstance::State::Live) return inst->due_ms;
  }
  return -1;
}

bool TaskLedger::paid(const std::string& order_key) const {
  auto it = paid_.find(order_key);
  return it != paid_.end() && it->second;
}

LedgerReport TaskLedger::check_stream(const std::vector<std::map<std::string, std::string>>& entries) const {
  LedgerReport report;
  report.tasks = tasks_.size();
  report.entries = entries.size();
  report.anomalies = anomalies_;
  report.problems = anomaly_text_;

  std::unordered_map<std::string, std::vector<const std::map<std::string, std::string>*>> by_id;
  for (const auto& entry : entries) {
    const std::string& id = field(entry, entry_field::kId);
    const long long due = to_ms(field(entry, entry_field::kDueMs));
    const long long fired = to_ms(field(entry, entry_field::kFiredMs));
    if (due >= 0 && fired >= 0) {
      if (fired < due) {
        ++report.early;
        add_problem(report.problems, "task " + id + " fired at " + std::to_string(fired) + " before its due time " +
                                         std::to_string(due));
      }
      report.max_lateness_ms = std::max(report.max_lateness_ms, fired - due);
    }
    if (tasks_.count(id) == 0) {
      ++report.unexpected;
      add_problem(report.problems, "stream entry " + field(entry, "_entry_id") + " of unknown task " + id);
      continue;
    }
    by_id[id].push_back(&entry);
  }

  for (const auto& [id, instances] : tasks_) {
    const auto found = by_id.find(id);
    static const std::vector<const std::map<std::string, std::string>*> kNone;
    const auto& mine = found == by_id.end() ? kNone : found->second;
    std::set<const std::map<std::string, std::string>*> matched;
    for (const auto& inst : instances) {
      size_t hits = 0;
      for (const auto* entry : mine) {
        if (to_ms(field(*entry, entry_field::kDueMs)) != inst.due_ms) continue;
        matched.insert(entry);
        ++hits;
        if (inst.state == TaskInstance::State::Live &&
            (field(*entry, entry_field::kPayload) != inst.payload || entry->count(entry_field::kMissingPayload) != 0)) {
          ++report.payload_mismatch;
          add_problem(report.problems, "task " + id + " forwarded with payload '" + field(*entry, entry_field::kPayload) +
                                           "' instead of '" + inst.payload + "'");
        }
      }
      switch (inst.state) {
        case TaskInstance::State::Live:
          ++report.expected_entries;
          if (hits == 0) {
            ++report.lost;
            add_problem(report.problems, "task " + id + " due at " + std::to_string(inst.due_ms) + " is not in the stream");
          } else if (hits > 1) {
            report.duplicated += hits - 1;
            add_problem(report.problems, "task " + id + " due at " + std::to_string(inst.due_ms) + " is in the stream " +
                                             std::to_string(hits) + " times");
          }
          break;
        case TaskInstance::State::Cancelled:
          ++report.cancelled;
          if (hits > 0) {
            report.fired_cancelled += hits;
            add_problem(report.problems, "cancelled task " + id + " is in the stream");
          }
          break;
        case TaskInstance::State::Replaced:
          ++report.replaced;
          if (hits > 0) {
            report.fired_replaced += hits;
            add_problem(report.problems, "rescheduled task " + id + " fired at its old due time " +
                                             std::to_string(inst.due_ms));
          }
          break;
      }
    }
    for (const auto* entry : mine) {
      if (matched.count(entry) != 0) continue;
      ++report.unexpected;
      add_problem(report.problems, "stream entry " + field(*entry, "_entry_id") + " of " + id + " has due_ms " +
                                       field(*entry, entry_field::kDueMs) + ", which no schedule of it returned");
    }
  }
  return report;
}

OrderReport TaskLedger::check_orders(const std::unordered_map<std::string, std::string>& status_by_order,
                                     const std::vector<std::string>& dead_lettered) const {
  OrderReport report;
  const std::set<std::string> dead(dead_lettered.begin(), dead_lettered.end());
  for (const auto& [key, instances] : tasks_) {
    (void)instances;
    ++report.orders;
    auto it = status_by_order.find(key);
    const std::string status = it == status_by_order.end() ? "" : it->second;
    if (paid(key)) {
      ++report.paid;
      if (status != "paid") {
        ++report.wrongly_cancelled;
        add_problem(report.problems, "paid order " + key + " has status '" + status + "'");
      }
      continue;
    }
    if (status == "cancelled") {
      ++report.cancelled;
      continue;
    }
    ++report.missed;
    if (dead.count(key) != 0) ++report.missed_dead_lettered;
    add_problem(report.problems, "unpaid order " + key + " has status '" + status + "'" +
                                     (dead.count(key) != 0 ? " (its timeout was dead-lettered)" : ""));
  }
  return report;
}

}  // namespace expiry::test
