// See stream_entry.h.
#include "functions/stream_entry.h"

#include <string_view>

#include "base/integers.h"

namespace expiry {
namespace {

// The value of `name` in `entry` (null when absent); `duplicated` is set when it occurs twice.
const std::string* only_value(const StreamEntry& entry, std::string_view name, bool& duplicated) {
  const std::string* found = nullptr;
  for (const auto& [k, v] : entry.fields) {
    if (k != name) continue;
    if (found) duplicated = true;
    found = &v;
  }
  return found;
}

std::optional<std::string> optional_text(const std::string* value) {
  return value ? std::optional<std::string>(*value) : std::nullopt;
}

// Reads the text fields of the schema; false when a required one is missing.
bool decode_texts(const StreamEntry& entry, ForwardedTask& task, bool& duplicated) {
  const std::string* id = only_value(entry, entry_field::kId, duplicated);
  const std::string* payload = only_value(entry, entry_field::kPayload, duplicated);
  const std::string* via = only_value(entry, entry_field::kVia, duplicated);
  if (!id || !payload || !via || via->empty()) return false;
  task.id = *id;
  task.payload = *payload;
  task.via = *via;
  task.missing_payload = optional_text(only_value(entry, entry_field::kMissingPayload, duplicated));
  task.undeliverable_stream = optional_text(only_value(entry, entry_field::kUndeliverableStream, duplicated));
  task.undeliverable_reason = optional_text(only_value(entry, entry_field::kUndeliverableReason, duplicated));
  return true;
}

// Reads the integer fields of the schema; false when a required one is missing or one is not
// an integer.
bool decode_integers(const StreamEntry& entry, ForwardedTask& task, bool& duplicated) {
  const std::string* due = only_value(entry, entry_field::kDueMs, duplicated);
  const std::string* fired = only_value(entry, entry_field::kFiredMs, duplicated);
  const std::string* created = only_value(entry, entry_field::kCreatedMs, duplicated);
  const auto due_ms = due ? parse_int64(*due) : std::nullopt;
  const auto fired_ms = fired ? parse_int64(*fired) : std::nullopt;
  if (!due_ms || !fired_ms) return false;
  task.due_ms = *due_ms;
  task.fired_ms = *fired_ms;
  if (created) {
    task.created_ms = parse_int64(*created);
    if (!task.created_ms) return false;
  }
  if (const std::string* attempt = only_value(entry, entry_field::kAttempt, duplicated)) {
    const auto n = parse_int64(*attempt);
    if (!n || *n < 1) return false;
    task.attempt = *n;
  }
  return true;
}

}  // namespace

const std::string& StreamEntry::field(const std::string& name) const {
  static const std::string kEmpty;
  for (const auto& [k, v] : fields) {
    if (k == name) return v;
  }
  return kEmpty;
}

std::vector<StreamEntry> parse_stream_entries(const Reply& entries) {
  std::vector<StreamEntry> out;
  if (entries.type != Reply::Type::Array) return out;
  for (const auto& e : entries.elements) {
    if (e.type != Reply::Type::Array || e.elements.size() != 2) continue;
    if (e.elements[1].type != Reply::Type::Array) continue;  // nil: deleted entry
    StreamEntry entry;
    entry.entry_id = e.elements[0].str;
    const auto& kv = e.elements[1].elements;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) entry.fields.emplace_back(kv[i].str, kv[i + 1].str);
    out.push_back(std::move(entry));
  }
  return out;
}

std::optional<ForwardedTask> decode_forwarded_task(const StreamEntry& entry) {
  ForwardedTask task;
  bool duplicated = false;
  if (!decode_texts(entry, task, duplicated) || !decode_integers(entry, task, duplicated) || duplicated) {
    return std::nullopt;
  }
  return task;
}

long long attempt_of(const StreamEntry& entry) {
  for (const auto& [k, v] : entry.fields) {
    if (k != entry_field::kAttempt) continue;
    const auto n = parse_int64(v);
    return n && *n >= 1 ? *n : 1;
  }
  return 1;
}

}  // namespace expiry
