// RecurringSchedules: the recurring schedules of a namespace (docs/protocol.md "Recurring
// schedules") on the blocking client, for expiry-ctl recur and expiry-api's /v1/schedules:
// create or replace, read with the next occurrences, list, delete, pause and resume. Occurrence
// instants are computed here (src/recur/) and written by the function library atomically.
// Bad input is a ConfigError with nothing written; a refused or failed call a ReplyError or
// IoError.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "functions/recur_calls.h"
#include "producer/task_placement.h"
#include "recur/recur_spec.h"

namespace expiry {

class RoutedClient;

// The longest recurring schedule id (MAX_RECUR_ID_BYTES in src/lua/expiry/recur.lua): a retry's
// "#<occurrence_ms>" must still fit a task id.
constexpr size_t kMaxRecurIdBytes = 200;

// Throws ConfigError for an id no schedule may have.
void check_recur_id(const std::string& id);

// A definition as written: the rule and what each occurrence carries.
struct RecurringWrite {
  RecurRuleSpec rule;
  std::string payload;
  std::string stream;   // empty: the relay's default stream
  std::string webhook;  // empty: none
  std::string misfire = "once";
  long long misfire_grace_ms = 1000;
  long long misfire_max = 100;
  std::optional<long long> max_late_ms;
};

struct RecurringSetOutcome {
  RecurSetResult result;
  std::string rule_text;  // as stored
  TimeZone zone;
};

// A stored schedule: its fields (as expiry_v2_recur_get answers them) and its next occurrences.
struct RecurringSchedule {
  std::string id;
  std::map<std::string, std::string> fields;
  std::vector<Occurrence> next;  // empty when paused, ended, or the rule does not read back

  std::string field(const std::string& name) const;
  std::optional<long long> number(const std::string& name) const;
  bool paused() const { return field("paused") == "1"; }
};

struct RecurringResumeOutcome {
  RecurStateResult state;
  std::string tz;
};

class RecurringSchedules {
 public:
  RecurringSchedules(RoutedClient& redis, const TaskPlacement& layout) : redis_(redis), layout_(layout) {}

  // Creates or replaces schedule `id`; `names` name the rule's fields in errors.
  RecurringSetOutcome set(const std::string& id, const RecurringWrite& write, const RecurFieldNames& names);
  // The schedule with its next `next_count` occurrences, or nullopt if there is none.
  std::optional<RecurringSchedule> get(const std::string& id, int next_count = 5);
  // Whether there was one to delete.
  bool remove(const std::string& id);
  RecurStateResult pause(const std::string& id);
  // Resumes it from now (Redis's clock), armed again at its next occurrence.
  RecurringResumeOutcome resume(const std::string& id);
  // Calls `visit` with each schedule, bucket by bucket in index order, until it returns false.
  void for_each(const std::function<bool(const RecurringSchedule&)>& visit, int next_count = 5);

 private:
  Reply call(const std::string& id, const std::vector<std::string>& argv);
  long long now_ms(const std::string& id);
  std::optional<int> db() const;
  std::vector<Occurrence> next_of(const std::map<std::string, std::string>& fields, long long now_ms, int count) const;

  RoutedClient& redis_;
  const TaskPlacement& layout_;
};

// The JSON of a schedule, as `expiry-ctl recur show --json` and GET /v1/schedules/{id} print it.
nlohmann::json recurring_schedule_json(const RecurringSchedule& schedule);

}  // namespace expiry
