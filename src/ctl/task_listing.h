// The pure parts of `expiry-ctl list` and the range commands: the --due-before value and the
// ISO-8601 rendering of a due time (the page cursor is producer/list_cursor.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace expiry {

// --due-before: "<epoch ms>" or "+<ms>" (from now, on the Redis clock). Returns the absolute
// bound, or nullopt when `text` is neither (or out of range). `now_ms` is only read for "+".
std::optional<long long> parse_due_before(std::string_view text, long long now_ms);
// True when `text` is the relative form (the caller then needs the Redis clock).
bool due_before_is_relative(std::string_view text);

// "2026-11-25T18:00:31.123Z" for epoch ms 0..253402300799999, else nullopt.
std::optional<std::string> iso8601_utc(long long ms);

}  // namespace expiry
