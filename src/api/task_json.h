// The JSON the API answers with for tasks: one task as `expiry-ctl show --json` prints it, one
// entry of a GET /v1/tasks page, and the results of schedule and run-now. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "functions/task_values.h"
#include "producer/task_reads.h"

namespace expiry {

// A pending task: id, pending, due_ms, due_in_ms, created_ms, payload, stream, default_stream,
// trigger_pttl_ms and the optional shadow fields present (first_ms, max_late_ms, traceparent,
// promoted_ms, promoted_from_ms, attempt), the shape of `expiry-ctl show --json`. A payload
// that is not valid UTF-8 is null there, and its bytes are in payload_b64.
nlohmann::json task_details_json(const std::string& id, const TaskDetails& task);

// One task of a page: id, due_ms, bucket, stream, default_stream, payload_bytes.
nlohmann::json listed_task_json(const ListedTask& task, const ListedTaskDetails& details);

nlohmann::json schedule_result_json(const std::string& id, const ScheduleResult& result);
nlohmann::json run_now_result_json(const std::string& id, const RunNowResult& result);

// Serializes a JSON answer; invalid UTF-8 (a key or a value from Redis) becomes U+FFFD.
std::string json_text(const nlohmann::json& j);

}  // namespace expiry
