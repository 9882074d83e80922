// Where a pending task stands in due order, and the opaque cursor of a page of the listing that
// carries it (Producer::list, expiry-ctl list --cursor). Pure.
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

}  // namespace expiry
