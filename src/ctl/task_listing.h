// The pure parts of `expiry-ctl list`: a task's position in due order, the opaque paging
// cursor that carries it, the --due-before value and the ISO-8601 rendering of a due time.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace expiry {

// Where a task stands in due order: its schedule score (the exact text Redis returned, so it
// can be sent back as a bound) and its member. Ties on the score are in byte order of the
// member, as Redis orders a sorted set's equal scores.
struct TaskPosition {
  std::string score;
  std::string member;
};

// The score of `p` as a number (nullopt when it is not one).
std::optional<double> position_score(const TaskPosition& p);
// a comes before b: by score, then by member bytes.
bool position_before(const TaskPosition& a, const TaskPosition& b);

// The cursor printed after a page: base64 of "v1:<score>:<member>". Opaque to users.
std::string encode_list_cursor(const TaskPosition& last);
// The position a cursor of encode_list_cursor stands for, or nullopt (with a reason in
// `error`) when the text is not one.
std::optional<TaskPosition> decode_list_cursor(std::string_view cursor, std::string* error = nullptr);

// --due-before: "<epoch ms>" or "+<ms>" (from now, on the Redis clock). Returns the absolute
// bound, or nullopt when `text` is neither (or out of range). `now_ms` is only read for "+".
std::optional<long long> parse_due_before(std::string_view text, long long now_ms);
// True when `text` is the relative form (the caller then needs the Redis clock).
bool due_before_is_relative(std::string_view text);

// "2026-11-25T18:00:31.123Z" for epoch ms 0..253402300799999, else nullopt.
std::optional<std::string> iso8601_utc(long long ms);

}  // namespace expiry
