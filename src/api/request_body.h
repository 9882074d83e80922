// The JSON bodies and query strings the API reads, validated before anything is sent to Redis:
// PUT /v1/tasks/{id} (a task), POST /v1/tasks/batch, /v1/tasks/cancel and /v1/tasks/run-now,
// POST /v1/pause, GET /v1/tasks's query, and the console's reschedule and purge. Each returns
// the value, or the reason it is refused (answered as 400). Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/range_cursor.h"
#include "producer/recurring_schedules.h"
#include "producer/task.h"
#include "producer/task_reads.h"

namespace expiry {

// The largest page GET /v1/tasks reads, and the page size when `limit` is not given.
constexpr long long kMaxPageLimit = 1000;
constexpr long long kDefaultPageLimit = 100;

// A body is `T` or the reason it is refused.
template <class T>
using Parsed = std::variant<T, std::string>;

// The task of PUT /v1/tasks/{id}: a JSON object with exactly one of delay_ms / at_ms (integers),
// at most one of payload (string) / payload_b64 (base64 of the bytes; none: an empty payload),
// and optionally stream (non-empty string), if_absent (boolean), debounce_max_ms, max_late_ms
// (integers), traceparent (string; absent: `traceparent_header` when the request had a valid
// one) and webhook (the expiry-webhook endpoint name, TaskOptions::webhook). Unknown fields are refused, so a misspelt option never passes silently. The task is
// checked by task_error (producer/task.h).
Parsed<Task> parse_task_body(std::string_view body, const std::string& id,
                             const std::optional<std::string>& traceparent_header);

// POST /v1/tasks/batch: {"tasks": [...]}, each item a PUT /v1/tasks/{id} body plus its "id". The
// body's own faults refuse the whole batch, so nothing is written: not a JSON object, "tasks"
// missing or not an array, an unknown field (400), more than kMaxBatchTasks items (413). An
// item's faults are its own: its `task` holds why it is refused, and the other items stand.
constexpr size_t kMaxBatchTasks = 1000;
struct BatchItem {
  std::string id;     // as given; empty when the item has no string "id"
  Parsed<Task> task;  // the task (checked by task_error), or why the item is refused
};
// A refusal of a whole body, with its status.
struct BodyRefusal {
  int status = 400;
  std::string detail;
};
std::variant<std::vector<BatchItem>, BodyRefusal> parse_batch_body(
    std::string_view body, const std::optional<std::string>& traceparent_header);

// POST /v1/tasks/cancel and /v1/tasks/run-now: which pending tasks, in exactly one form, and how
// far this call goes:
// - {"prefix": P}: the ids starting with P (non-empty), as `expiry-ctl cancel --prefix`;
// - {"due_from_ms": F, "due_to_ms": T}: the tasks due in [F, T) (epoch ms in 0..kMaxTimeMs, at
//   least one of the two, F < T when both), as --due-after/--due-before;
// - optional "limit": the most tasks this call examines (1..kMaxRangeExamined, the default);
// - optional "cursor": the previous answer's next_cursor, to go on from where it stopped.
// Both forms, or neither: refused.
constexpr long long kMaxRangeExamined = 10000;
struct RangeRequest {
  std::string prefix;                    // non-empty: the prefix form
  std::optional<long long> due_from_ms;  // the due-range form: at least one of the two
  std::optional<long long> due_to_ms;
  long long limit = kMaxRangeExamined;
  std::optional<RangeCursor> cursor;
};
Parsed<RangeRequest> parse_range_body(std::string_view body);

// POST /v1/pause: an empty body or {"for_ms": N} (N >= 0; 0 or absent: until resumed).
Parsed<long long> parse_pause_body(std::string_view body);

// GET /v1/tasks: prefix (ids starting with it), due_before (epoch ms), limit (1..kMaxPageLimit,
// default kDefaultPageLimit), cursor (the `next` of the page before). Other keys are refused.
struct TaskListRequest {
  ListQuery query;
  std::string prefix;
};
Parsed<TaskListRequest> parse_list_query(const std::multimap<std::string, std::string>& query);

// POST /v1/dead/replay: {"entries": ["<entry>", ...] (1..kMaxReplayEntries, as GET /v1/dead
// names them), "delay_ms": N (optional, 0..kMaxTimeMs: due that long from now)}.
constexpr size_t kMaxReplayEntries = 100;
struct DeadReplayRequest {
  std::vector<std::string> entries;
  long long delay_ms = 0;
};
Parsed<DeadReplayRequest> parse_dead_replay_body(std::string_view body);

// POST /v1/dead/purge: {"entries": ["<entry>", ...]} (1..kMaxReplayEntries, as GET /v1/dead names them).
Parsed<std::vector<std::string>> parse_dead_purge_body(std::string_view body);

// POST /v1/tasks/{id}/reschedule: {"delay_ms": N} (due N ms from now) or {"at_ms": T} (epoch ms),
// exactly one, 0..kMaxTimeMs; the task keeps its payload and options.
struct RescheduleRequest {
  ScheduleMode mode = ScheduleMode::Delay;
  long long ms = 0;
};
Parsed<RescheduleRequest> parse_reschedule_body(std::string_view body);

// PUT /v1/schedules/{id}: the rule (exactly one of cron and every, tz, start, end: strings, start
// and end also epoch ms as integers; allow_sub_second) and what each occurrence carries (payload,
// stream, webhook, misfire, misfire_grace_ms, misfire_max, max_late_ms), named as
// `expiry-ctl recur set`'s flags. Unknown fields are refused. The rule itself is checked when
// it is written (RecurringSchedules::set), as the CLI's is.
Parsed<RecurringWrite> parse_schedule_body(std::string_view body);

// POST /v1/schedules/preview: the rule fields of parse_schedule_body, plus from (a time, default
// now) and count (1..kMaxPreviewCount, default kDefaultPreviewCount).
constexpr long long kMaxPreviewCount = 1000;
constexpr long long kDefaultPreviewCount = 10;
struct SchedulePreviewRequest {
  RecurRuleSpec rule;
  std::optional<std::string> from;
  long long count = kDefaultPreviewCount;
};
Parsed<SchedulePreviewRequest> parse_schedule_preview_body(std::string_view body);

// GET /v1/schedules/{id}/preview: count (1..kMaxPreviewCount, default kDefaultPreviewCount).
Parsed<long long> parse_preview_query(const std::multimap<std::string, std::string>& query);

// GET /v1/dead: limit (1..kMaxPageLimit, default kDefaultPageLimit).
Parsed<long long> parse_dead_list_query(const std::multimap<std::string, std::string>& query);

}  // namespace expiry
