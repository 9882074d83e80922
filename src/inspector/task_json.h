// One task as `expiry-ctl show --json` prints it, and as expiry-api answers GET /v1/tasks/{id}.
// Pure.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>
#include <string>

#include "producer/task_reads.h"

namespace expiry {

// The shadow fields only some tasks have, in the order they are shown.
inline constexpr const char* kOptionalShadowFields[] = {
    "first_ms", "max_late_ms",   "traceparent",   "promoted_ms",      "promoted_from_ms", "attempt",
    "webhook",  "occurrence_ms", "recur",         "occurrence_local", "as_id"};
// Of those, the ones that are text even when they read as a number.
inline bool is_text_shadow_field(std::string_view name) {
  return name == "traceparent" || name == "webhook" || name == "occurrence_local" || name == "as_id";
}

// What becomes of a payload that is not valid UTF-8.
enum class BinaryPayload {
  AsText,    // "payload" holds the bytes (the serializer replaces invalid ones): expiry-ctl
  AsBase64,  // "payload" is null and "payload_b64" holds the bytes: expiry-api
};

// A task that is not pending: {id, pending: false}. A pending one: id, pending, due_ms, due_in_ms,
// created_ms, payload, stream, default_stream, trigger_pttl_ms and the optional shadow fields
// present (numbers as numbers, traceparent as text).
nlohmann::json task_details_json(const std::string& id, const TaskDetails& task, BinaryPayload binary);

}  // namespace expiry
