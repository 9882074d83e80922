// The stream-entry schema: the field names of the entry the relay writes for a forwarded task
// (expiry_claim and expiry_sweep in src/lua/expiry.lua) and of a dead letter (expiry_dead_letter).
// The Lua library is the writer; everything in C++ that reads or checks an entry names its
// fields through these constants.
#pragma once

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
