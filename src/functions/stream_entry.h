// The stream-entry schema: the field names of the entry the relay writes for a forwarded task
// (claim and sweep in src/lua/expiry/claim.lua) and of a dead letter (expiry_dead_letter),
// a stream entry as a plain value, and their decoders. The Lua library is the writer; everything
// in C++ that reads or checks an entry names its fields through these constants and decodes it
// here. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redis/reply.h"

namespace expiry::entry_field {

// A forwarded task, in this order: id, payload, due_ms, fired_ms, via, then the optional ones.
inline constexpr const char* kId = "id";
inline constexpr const char* kPayload = "payload";
inline constexpr const char* kDueMs = "due_ms";        // the due time, ms on the Redis clock
inline constexpr const char* kFiredMs = "fired_ms";    // when it was forwarded, ms on the Redis clock
inline constexpr const char* kVia = "via";             // kViaEvent or kViaSweep
inline constexpr const char* kCreatedMs = "created_ms";          // when it was scheduled
inline constexpr const char* kMissingPayload = "missing_payload";  // "absent" or "wrongtype"
inline constexpr const char* kUndeliverableStream = "undeliverable_stream";  // its own stream refused it
inline constexpr const char* kUndeliverableReason = "undeliverable_reason";
inline constexpr const char* kAttempt = "attempt";  // 1 for the first delivery; absent means 1

inline constexpr const char* kViaEvent = "event";
inline constexpr const char* kViaSweep = "sweep";

// A dead letter.
inline constexpr const char* kOriginalId = "original_id";
inline constexpr const char* kOriginalStream = "original_stream";
inline constexpr const char* kGroup = "group";
inline constexpr const char* kReason = "reason";
inline constexpr const char* kDeliveries = "deliveries";
inline constexpr const char* kDeadMs = "dead_ms";

}  // namespace expiry::entry_field

namespace expiry {

// One stream entry as Redis returned it: its id and its field/value pairs in order.
struct StreamEntry {
  std::string entry_id;
  std::vector<std::pair<std::string, std::string>> fields;
  uint64_t deliveries = 1;  // known exactly for reclaimed entries; 1 for fresh reads

  // The value of `name` (its first occurrence), or empty if the field is absent.
  const std::string& field(const std::string& name) const;
};

// Parses an XREAD/XREADGROUP/XCLAIM reply body (an array of [id, [f, v, ...]]) into entries;
// entries whose body is nil (deleted from the stream) or malformed are skipped.
std::vector<StreamEntry> parse_stream_entries(const Reply& entries);

// A forwarded task's entry, decoded (field names in entry_field).
struct ForwardedTask {
  std::string id;
  std::string payload;
  long long due_ms = 0;                    // ms on the Redis clock
  long long fired_ms = 0;                  // ms on the Redis clock
  std::string via;                         // kViaEvent, kViaSweep, or another forwarder's name
  std::optional<long long> created_ms;     // absent for tasks scheduled before it was recorded
  std::optional<std::string> missing_payload;       // "absent" or "wrongtype"
  std::optional<std::string> undeliverable_stream;  // set together with undeliverable_reason
  std::optional<std::string> undeliverable_reason;
  long long attempt = 1;                   // kAttempt: which delivery this is (expiry_retry counts them)
};

// Strict: nullopt unless id, payload, due_ms, fired_ms and via are present, due_ms, fired_ms
// (and created_ms if present) are parse_int64 integers, via is not empty, and no field of the
// schema occurs twice, and attempt (if present) is an integer >= 1. Fields outside the schema
// are ignored.
std::optional<ForwardedTask> decode_forwarded_task(const StreamEntry& entry);

// Whether a forwarded task's lateness (fired_ms - due_ms) means anything: not for a task
// scheduled at or after its due time (an at_ms in the past, due at once), where it only says how
// far in the past that time was. The library's late dead letters and the relay's lateness
// histogram apply the same rule: created_ms < due_ms, or created_ms unknown.
inline bool lateness_applies(std::optional<long long> created_ms, long long due_ms) {
  return !created_ms || *created_ms < due_ms;
}

// The attempt number of an entry: its kAttempt field when that is an integer >= 1, else 1
// (entries written before attempts were counted, or a malformed field).
long long attempt_of(const StreamEntry& entry);

}  // namespace expiry
