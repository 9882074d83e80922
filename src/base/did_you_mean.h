// Did-you-mean suggestions for a mistyped name (a subcommand, a time zone): the closest of the
// names a program knows, by edit distance. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace expiry {

// The optimal string alignment distance between `a` and `b`, ASCII letters compared without
// case: the fewest insertions, deletions, substitutions and swaps of two adjacent bytes that
// turn one into the other ("shedule" -> "schedule": 1, "Berlni" -> "Berlin": 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, when it is close enough to be the name meant: at most 1 edit
// for a word of up to 4 bytes, else at most a third of its length (at least 2). The first of
// equally close candidates wins; nullopt when none is close enough, or `word` is itself one.
std::optional<std::string> closest_name(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace expiry
