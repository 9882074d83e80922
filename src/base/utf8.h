// UTF-8 validation shared by the id rule and the CLI's text rendering.
#pragma once

#include <cstddef>
#include <string_view>

namespace expiry {

// Length (1-4) of the valid UTF-8 sequence starting at s[i], or 0 if it is not valid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence_length(std::string_view s, size_t i);

// The code point of the valid sequence of length `len` at s[i] (see utf8_sequence_length).
char32_t utf8_code_point(std::string_view s, size_t i, size_t len);

// True for a code point that can break or disguise a line of text: C0 and C1 controls, DEL, the
// line and paragraph separators U+2028/U+2029, the byte order mark U+FEFF and the bidirectional
// controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069). Ids may not contain them, and the text
// renderings (text_escape.h) escape them.
bool is_disguising_code_point(char32_t cp);

}  // namespace expiry
