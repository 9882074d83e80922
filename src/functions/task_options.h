// The options of one task to schedule (docs/protocol.md, "Schedule options"): the schedule mode
// (replace, keep-first, debounce), its lateness limit, its W3C trace context and the webhook
// endpoint that delivers it (expiry-webhook, docs/webhooks.md). They travel to
// the library as one string of space-separated tokens, which the library parses again
// (parse_task_options in src/lua/expiry/checks.lua). Pure, no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace expiry {

struct TaskOptions {
  bool if_absent = false;                     // keep a pending task (reply: kept, its due time)
  std::optional<long long> debounce_max_ms;   // due at most this long after the pending task's first schedule
  std::optional<long long> max_late_ms;       // dead-letter instead of forwarding when later than this
  std::optional<std::string> traceparent;     // copied into the stream entry
  std::optional<std::string> webhook;         // endpoint name, copied into the stream entry

  bool empty() const { return !if_absent && !debounce_max_ms && !max_late_ms && !traceparent && !webhook; }
};

// An error message if `name` is not a webhook endpoint name: 1..64 characters [A-Za-z0-9_.-].
std::optional<std::string> webhook_name_error(std::string_view name);

// An error message if `tp` is not a W3C trace context traceparent: version-traceid-parentid-
// flags as 2-32-16-2 lowercase hex digits, version not ff, neither id all zeros.
std::optional<std::string> traceparent_error(std::string_view tp);

// An error message if the options cannot be sent (if_absent with debounce, a debounce below
// 1 ms, a negative limit, a bad traceparent or webhook name); the library refuses the same.
std::optional<std::string> task_options_error(const TaskOptions& options);

// The options argument of expiry_schedule / expiry_schedule_many ("" when there are none).
std::string task_options_argument(const TaskOptions& options);

}  // namespace expiry
