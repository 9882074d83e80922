// Reading replies whose shape the Inspector's reads share: integers that may come as text, XINFO
// rows, replies that are unknown rather than fatal, and the slot a default stream is read on.
// Internal to src/inspector.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/errors.h"
#include "producer/task_placement.h"
#include "redis/redis_values.h"
#include "redis/reply.h"

namespace expiry::inspector_reads {

// Throws IoError for a lost connection and ReplyError for an error reply, naming `what`.
inline void check(const Reply& r, const std::string& what) {
  if (r.is_io_error()) throw IoError(what + ": " + r.str);
  if (r.failed()) throw ReplyError(what + ": " + r.str);
}

// A reply that is unknown rather than fatal: an error (NOPERM, a missing stream) is nullptr; a
// lost connection still throws.
inline const Reply* optional_reply(const Reply& r) {
  if (r.is_io_error()) throw IoError(r.str);
  return r.failed() ? nullptr : &r;
}

// An integer reply, or one as text; nullopt otherwise (Nil: Redis cannot compute it).
inline std::optional<long long> integer_of(const Reply& r) {
  if (r.type == Reply::Type::Integer) return r.integer;
  if (r.type == Reply::Type::String) return to_integer(r.str);
  return std::nullopt;
}

// The value named `name` in a flat name/value array (an XINFO row).
inline const Reply* info_value(const Reply& row, std::string_view name) {
  if (row.type != Reply::Type::Array) return nullptr;
  for (size_t i = 0; i + 1 < row.elements.size(); i += 2) {
    if (row.elements[i].str == name) return &row.elements[i + 1];
  }
  return nullptr;
}

inline std::optional<long long> info_integer(const Reply& row, std::string_view name) {
  const Reply* v = info_value(row, name);
  return v ? integer_of(*v) : std::nullopt;
}

// The slot of stream `s` of layout.streams(): its bucket's, or bucket 0's for the one stream.
inline int slot_of_stream(const TaskPlacement& layout, size_t s) {
  return TaskPlacement::slot_of_bucket(layout.bucket_streams() ? static_cast<int>(s) : 0);
}

}  // namespace expiry::inspector_reads
