// See request_body.h.
#include "api/request_body.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iterator>

#include "base/base64.h"
#include "base/integers.h"
#include "functions/task_options.h"
#include "producer/list_cursor.h"

namespace expiry {
namespace {

using json = nlohmann::json;

const char* kTaskFields[] = {"delay_ms",  "at_ms",           "payload",     "payload_b64", "stream",
                             "if_absent", "debounce_max_ms", "max_late_ms", "traceparent",
                             "webhook"};

// The object of `body`, or the reason it is not one.
Parsed<json> object_of(std::string_view body) {
  json j = json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_discarded()) return std::string("the body is not valid JSON");
  if (!j.is_object()) return std::string("the body must be a JSON object");
  return j;
}

// Reads an optional integer field; sets `error` when it is there and not an integer.
std::optional<long long> integer_field(const json& j, const char* name, std::string& error) {
  const auto it = j.find(name);
  if (it == j.end() || !error.empty()) return std::nullopt;
  if (!it->is_number_integer()) {
    error = std::string(name) + " must be an integer";
    return std::nullopt;
  }
  if (it->is_number_unsigned() && it->get<unsigned long long>() > static_cast<unsigned long long>(INT64_MAX)) {
    error = std::string(name) + " is too large";
    return std::nullopt;
  }
  return it->get<long long>();
}

std::optional<std::string> string_field(const json& j, const char* name, std::string& error) {
  const auto it = j.find(name);
  if (it == j.end() || !error.empty()) return std::nullopt;
  if (!it->is_string()) {
    error = std::string(name) + " must be a string";
    return std::nullopt;
  }
  return it->get<std::string>();
}

}  // namespace

namespace {

// The task of object `j` (a PUT /v1/tasks/{id} body; with `with_id`, a batch item, whose "id"
// field is read by the caller), or why it is refused.
Parsed<Task> task_of_object(const json& j, const std::string& id, const std::optional<std::string>& traceparent_header,
                            bool with_id) {
  for (const auto& [key, value] : j.items()) {
    bool known = with_id && key == "id";
    for (const char* f : kTaskFields) known = known || key == f;
    if (!known) return "unknown field " + json(key).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::string error;
  Task task;
  task.id = id;
  const auto delay = integer_field(j, "delay_ms", error);
  const auto at = integer_field(j, "at_ms", error);
  const auto payload = string_field(j, "payload", error);
  const auto payload_b64 = string_field(j, "payload_b64", error);
  const auto stream = string_field(j, "stream", error);
  task.options.debounce_max_ms = integer_field(j, "debounce_max_ms", error);
  task.options.max_late_ms = integer_field(j, "max_late_ms", error);
  task.options.traceparent = string_field(j, "traceparent", error);
  task.options.webhook = string_field(j, "webhook", error);
  if (const auto it = j.find("if_absent"); it != j.end() && error.empty()) {
    if (!it->is_boolean()) return std::string("if_absent must be true or false");
    task.options.if_absent = it->get<bool>();
  }
  if (!error.empty()) return error;
  if (delay.has_value() == at.has_value()) return std::string("give exactly one of delay_ms and at_ms");
  task.mode = delay ? ScheduleMode::Delay : ScheduleMode::At;
  task.ms = delay ? *delay : *at;
  if (payload && payload_b64) return std::string("give at most one of payload and payload_b64");
  if (payload) task.payload = *payload;
  if (payload_b64) {
    std::string why;
    const auto bytes = base64_decode(*payload_b64, &why);
    if (!bytes) return "payload_b64 is not base64: " + why;
    task.payload = *bytes;
  }
  if (stream) {
    if (stream->empty()) return std::string("stream must not be empty (omit it for the default stream)");
    task.stream = *stream;
  }
  if (!task.options.traceparent && traceparent_header && !traceparent_error(*traceparent_header)) {
    task.options.traceparent = traceparent_header;
  }
  if (auto err = task_error(task)) return *err;
  return task;
}

}  // namespace

Parsed<Task> parse_task_body(std::string_view body, const std::string& id,
                             const std::optional<std::string>& traceparent_header) {
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  return task_of_object(std::get<json>(parsed), id, traceparent_header, false);
}

std::variant<std::vector<BatchItem>, BodyRefusal> parse_batch_body(
    std::string_view body, const std::optional<std::string>& traceparent_header) {
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return BodyRefusal{400, *err};
  const json& j = std::get<json>(parsed);
  for (const auto& [key, value] : j.items()) {
    if (key != "tasks") {
      return BodyRefusal{400, "unknown field " + json(key).dump(-1, ' ', false, json::error_handler_t::replace)};
    }
  }
  const auto tasks = j.find("tasks");
  if (tasks == j.end() || !tasks->is_array()) {
    return BodyRefusal{400,
                       "the body must be {\"tasks\": [...]}, an array of PUT /v1/tasks/{id} bodies each with its \"id\""};
  }
  if (tasks->size() > kMaxBatchTasks) {
    return BodyRefusal{413, "the batch holds " + std::to_string(tasks->size()) + " tasks; at most " +
                                std::to_string(kMaxBatchTasks) + " are taken in one request (nothing was written)"};
  }
  std::vector<BatchItem> items;
  items.reserve(tasks->size());
  for (const json& item : *tasks) {
    BatchItem out{"", std::string()};
    if (!item.is_object()) {
      out.task = std::string("a task must be a JSON object: a PUT /v1/tasks/{id} body with its \"id\"");
    } else if (const auto id = item.find("id"); id == item.end() || !id->is_string()) {
      out.task = std::string("id must be a string, the task's id");
    } else {
      out.id = id->get<std::string>();
      out.task = task_of_object(item, out.id, traceparent_header, true);
    }
    items.push_back(std::move(out));
  }
  return items;
}

Parsed<long long> parse_pause_body(std::string_view body) {
  if (body.empty()) return 0LL;
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  const json& j = std::get<json>(parsed);
  for (const auto& [key, value] : j.items()) {
    if (key != "for_ms") return "unknown field " + json(key).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::string error;
  const auto for_ms = integer_field(j, "for_ms", error);
  if (!error.empty()) return error;
  if (for_ms && (*for_ms < 0 || *for_ms > kMaxTimeMs)) {
    return "for_ms must be between 0 and " + std::to_string(kMaxTimeMs);
  }
  return for_ms.value_or(0);
}

Parsed<TaskListRequest> parse_list_query(const std::multimap<std::string, std::string>& query) {
  TaskListRequest out;
  out.query.count = kDefaultPageLimit;
  for (const auto& [key, value] : query) {
    if (query.count(key) > 1) return "query parameter " + key + " is given more than once";
    if (key == "prefix") {
      out.prefix = value;
    } else if (key == "due_before") {
      const auto ms = parse_int64(value);
      if (!ms || *ms < 1 || *ms > kMaxTimeMs) return std::string("due_before must be epoch milliseconds");
      out.query.due_before_ms = *ms;
    } else if (key == "limit") {
      const auto n = parse_int64(value);
      if (!n || *n < 1 || *n > kMaxPageLimit) return "limit must be between 1 and " + std::to_string(kMaxPageLimit);
      out.query.count = *n;
    } else if (key == "cursor") {
      std::string why;
      if (!value.empty() && !decode_list_cursor(value, &why))
        return "cursor is not a cursor this API gave (" + why + ")";
      out.query.cursor = value;
    } else {
      return "unknown query parameter " + json(key).dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  return out;
}

namespace {

// The "entries" field of a dead-letter body: 1..kMaxReplayEntries non-empty strings.
Parsed<std::vector<std::string>> entries_field(const json& j) {
  const auto it = j.find("entries");
  if (it == j.end() || !it->is_array() || it->empty() || it->size() > kMaxReplayEntries) {
    return "entries must be an array of 1 to " + std::to_string(kMaxReplayEntries) + " entry names";
  }
  std::vector<std::string> out;
  for (const json& e : *it) {
    if (!e.is_string() || e.get<std::string>().empty()) return std::string("entries must hold entry names (strings)");
    out.push_back(e.get<std::string>());
  }
  return out;
}

// The first key of `j` not in `allowed`, as the 400 that refuses it; nullopt: none.
std::optional<std::string> unknown_field(const json& j, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : j.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return "unknown field " + json(key).dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  return std::nullopt;
}

}  // namespace

Parsed<DeadReplayRequest> parse_dead_replay_body(std::string_view body) {
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  const json& j = std::get<json>(parsed);
  if (auto err = unknown_field(j, {"entries", "delay_ms"})) return *err;
  DeadReplayRequest out;
  auto entries = entries_field(j);
  if (auto* err = std::get_if<std::string>(&entries)) return *err;
  out.entries = std::get<std::vector<std::string>>(std::move(entries));
  std::string error;
  const auto delay = integer_field(j, "delay_ms", error);
  if (!error.empty()) return error;
  if (delay && (*delay < 0 || *delay > kMaxTimeMs))
    return "delay_ms must be between 0 and " + std::to_string(kMaxTimeMs);
  out.delay_ms = delay.value_or(0);
  return out;
}

Parsed<std::vector<std::string>> parse_dead_purge_body(std::string_view body) {
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  const json& j = std::get<json>(parsed);
  if (auto err = unknown_field(j, {"entries"})) return *err;
  return entries_field(j);
}

Parsed<RescheduleRequest> parse_reschedule_body(std::string_view body) {
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  const json& j = std::get<json>(parsed);
  if (auto err = unknown_field(j, {"delay_ms", "at_ms"})) return *err;
  std::string error;
  const auto delay = integer_field(j, "delay_ms", error);
  if (!error.empty()) return error;
  const auto at = integer_field(j, "at_ms", error);
  if (!error.empty()) return error;
  if (delay.has_value() == at.has_value()) return std::string("give exactly one of delay_ms and at_ms");
  const long long ms = delay ? *delay : *at;
  if (ms < 0 || ms > kMaxTimeMs) {
    return std::string(delay ? "delay_ms" : "at_ms") + " must be between 0 and " + std::to_string(kMaxTimeMs);
  }
  return RescheduleRequest{delay ? ScheduleMode::Delay : ScheduleMode::At, ms};
}

Parsed<RangeRequest> parse_range_body(std::string_view body) {
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  const json& j = std::get<json>(parsed);
  if (auto err = unknown_field(j, {"prefix", "due_from_ms", "due_to_ms", "limit", "cursor"})) return *err;
  std::string error;
  RangeRequest out;
  const auto prefix = string_field(j, "prefix", error);
  out.due_from_ms = integer_field(j, "due_from_ms", error);
  out.due_to_ms = integer_field(j, "due_to_ms", error);
  const auto limit = integer_field(j, "limit", error);
  const auto cursor = string_field(j, "cursor", error);
  if (!error.empty()) return error;
  const bool range = out.due_from_ms || out.due_to_ms;
  if (prefix.has_value() == range) {
    return std::string("give exactly one form: {\"prefix\": ...} or {\"due_from_ms\": ..., \"due_to_ms\": ...}");
  }
  if (prefix) {
    if (prefix->empty()) return std::string("prefix must not be empty");
    out.prefix = *prefix;
  }
  for (const auto& [name, ms] : {std::pair{"due_from_ms", out.due_from_ms}, std::pair{"due_to_ms", out.due_to_ms}}) {
    if (ms && (*ms < 0 || *ms > kMaxTimeMs)) {
      return std::string(name) + " must be between 0 and " + std::to_string(kMaxTimeMs);
    }
  }
  if (out.due_from_ms && out.due_to_ms && *out.due_from_ms >= *out.due_to_ms) {
    return std::string("due_from_ms must be less than due_to_ms (the range is due_from_ms <= due < due_to_ms)");
  }
  if (limit) {
    if (*limit < 1 || *limit > kMaxRangeExamined) {
      return "limit must be between 1 and " + std::to_string(kMaxRangeExamined);
    }
    out.limit = *limit;
  }
  if (cursor && !cursor->empty()) {
    out.cursor = parse_range_cursor(*cursor);
    if (!out.cursor) return std::string("cursor is not a next_cursor this API gave");
  }
  return out;
}

Parsed<long long> parse_dead_list_query(const std::multimap<std::string, std::string>& query) {
  long long limit = kDefaultPageLimit;
  for (const auto& [key, value] : query) {
    if (key != "limit")
      return "unknown query parameter " + json(key).dump(-1, ' ', false, json::error_handler_t::replace);
    if (query.count(key) > 1) return std::string("query parameter limit is given more than once");
    const auto n = parse_int64(value);
    if (!n || *n < 1 || *n > kMaxPageLimit) return "limit must be between 1 and " + std::to_string(kMaxPageLimit);
    limit = *n;
  }
  return limit;
}


namespace {

const char* kRuleFields[] = {"cron", "every", "tz", "start", "end", "allow_sub_second"};
const char* kScheduleFields[] = {"payload", "stream", "webhook", "misfire", "misfire_grace_ms", "misfire_max",
                                 "max_late_ms"};
const char* kPreviewFields[] = {"from", "count"};

bool listed(const std::string& key, std::initializer_list<const char* const*> lists,
            std::initializer_list<size_t> sizes) {
  auto size = sizes.begin();
  for (const char* const* list : lists) {
    for (size_t i = 0; i < *size; ++i) {
      if (key == list[i]) return true;
    }
    ++size;
  }
  return false;
}

// A time field: a string as the CLI takes it (epoch ms, ISO-8601, local time in tz), or epoch ms.
std::optional<std::string> time_field(const json& j, const char* name, std::string& error) {
  const auto it = j.find(name);
  if (it == j.end() || !error.empty()) return std::nullopt;
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  if (!it->is_string()) {
    error = std::string(name) + " must be a time: epoch ms, or a string as expiry-ctl recur takes it";
    return std::nullopt;
  }
  return it->get<std::string>();
}

// The rule fields of `j`; `error` set when one is of the wrong type.
RecurRuleSpec rule_fields(const json& j, std::string& error) {
  RecurRuleSpec rule;
  rule.cron = string_field(j, "cron", error);
  rule.every = string_field(j, "every", error);
  if (auto tz = string_field(j, "tz", error)) rule.tz = *tz;
  rule.start = time_field(j, "start", error);
  rule.end = time_field(j, "end", error);
  if (const auto it = j.find("allow_sub_second"); it != j.end() && error.empty()) {
    if (!it->is_boolean()) {
      error = "allow_sub_second must be true or false";
    } else {
      rule.allow_sub_second = it->get<bool>();
    }
  }
  return rule;
}

std::string unknown_field(const std::string& key) {
  return "unknown field " + json(key).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

Parsed<RecurringWrite> parse_schedule_body(std::string_view body) {
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  const json& j = std::get<json>(parsed);
  for (const auto& [key, value] : j.items()) {
    if (!listed(key, {kRuleFields, kScheduleFields}, {std::size(kRuleFields), std::size(kScheduleFields)})) {
      return unknown_field(key);
    }
  }
  std::string error;
  RecurringWrite w;
  w.rule = rule_fields(j, error);
  if (auto v = string_field(j, "payload", error)) w.payload = *v;
  if (auto v = string_field(j, "stream", error)) w.stream = *v;
  if (auto v = string_field(j, "webhook", error)) w.webhook = *v;
  if (auto v = string_field(j, "misfire", error)) w.misfire = *v;
  if (auto v = integer_field(j, "misfire_grace_ms", error)) w.misfire_grace_ms = *v;
  if (auto v = integer_field(j, "misfire_max", error)) w.misfire_max = *v;
  w.max_late_ms = integer_field(j, "max_late_ms", error);
  if (!error.empty()) return error;
  if (w.misfire_grace_ms < 0) return std::string("misfire_grace_ms must be 0 or more");
  if (w.misfire_max < 1) return std::string("misfire_max must be 1 or more");
  if (w.max_late_ms && *w.max_late_ms < 0) return std::string("max_late_ms must be 0 or more");
  return w;
}

Parsed<SchedulePreviewRequest> parse_schedule_preview_body(std::string_view body) {
  auto parsed = object_of(body);
  if (auto* err = std::get_if<std::string>(&parsed)) return *err;
  const json& j = std::get<json>(parsed);
  for (const auto& [key, value] : j.items()) {
    if (!listed(key, {kRuleFields, kPreviewFields}, {std::size(kRuleFields), std::size(kPreviewFields)})) {
      return unknown_field(key);
    }
  }
  std::string error;
  SchedulePreviewRequest r;
  r.rule = rule_fields(j, error);
  r.from = time_field(j, "from", error);
  if (auto n = integer_field(j, "count", error)) r.count = *n;
  if (!error.empty()) return error;
  if (r.count < 1 || r.count > kMaxPreviewCount) return "count must be between 1 and " + std::to_string(kMaxPreviewCount);
  return r;
}

Parsed<long long> parse_preview_query(const std::multimap<std::string, std::string>& query) {
  long long count = kDefaultPreviewCount;
  for (const auto& [key, value] : query) {
    if (key != "count") return "unknown query parameter " + json(key).dump(-1, ' ', false, json::error_handler_t::replace);
    if (query.count(key) > 1) return std::string("query parameter count is given more than once");
    const auto n = parse_int64(value);
    if (!n || *n < 1 || *n > kMaxPreviewCount) return "count must be between 1 and " + std::to_string(kMaxPreviewCount);
    count = *n;
  }
  return count;
}

}  // namespace expiry
