// The JSON bodies and query strings the API reads, validated before anything is sent to Redis:
// PUT /v1/tasks/{id} (a task), POST /v1/pause, GET /v1/tasks's query, and the console's
// reschedule and purge. Each returns the value, or
// the reason it is refused (answered as 400). Pure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

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
