// The answers of the web console's reads (docs/api.md, "Web console"): GET /v1/overview,
// /v1/timeline, /v1/recurring and /v1/tasks/{id}/state, each read by the Inspector on a worker's
// Producer connection (inspector/overview.h and task_state.h say what each read costs) and only
// formatted here. What the API's Redis user may not read is null, not an error.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace expiry {

class Producer;

// Inspector::overview: pending, overdue and pause per bucket; forwarded per second and lateness
// p50/p99 of the last minute; dead letters per reason; consumer groups and their consumers;
// relays. `dead_stream` as list_dead_letters.
nlohmann::json read_overview(Producer& producer, const std::string& dead_stream);

// Inspector::timeline: tasks due in each bar of kTimelineRanges, plus the overdue and those due
// beyond a day.
nlohmann::json read_timeline(Producer& producer);

// Inspector::recurring_summaries: {"schedules": [...], "count", "more"}.
nlohmann::json read_recurring(Producer& producer, long long limit);

// Inspector::task_state: where task `id` is, pending (its details), fired (its entry, and each
// group's delivery), dead (its dead letter), or unknown.
nlohmann::json read_task_state(Producer& producer, const std::string& dead_stream, const std::string& id);

}  // namespace expiry
