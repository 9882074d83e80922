// Where a bulk action (POST /v1/tasks/cancel, /v1/tasks/run-now) stopped: the bucket it was
// walking and the library's cursor in it, as one opaque text the client sends back. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace expiry {

struct RangeCursor {
  int bucket = 0;    // 0-based; the buckets before it are done
  std::string step;  // the library's cursor in `bucket` ("<score>:<skip>", ranges.lua); empty: its start
};

// "<bucket>/<step>", e.g. "0/1767225600000:2" or "3/".
std::string range_cursor_text(const RangeCursor& cursor);
// The cursor of range_cursor_text's `text`; nullopt for any other text. The bucket is not
// checked against the namespace's count here.
std::optional<RangeCursor> parse_range_cursor(std::string_view text);

}  // namespace expiry
