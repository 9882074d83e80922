// Rendering of arbitrary bytes (ids, payloads, field values, log messages) on one readable line.
// Pure; shared by the text log format (logging.cpp) and expiry-ctl's output.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace expiry {

// The byte offset of the first byte that does not start a valid UTF-8 sequence (overlong forms,
// surrogates and code points above U+10FFFF are invalid), or std::string_view::npos.
size_t first_invalid_utf8(std::string_view s);

// `s` with valid UTF-8 kept as is, \n \r \t as those escapes, and the bytes of every other
// character that can break or disguise a line (C0/C1 controls, U+2028/U+2029, bidi controls,
// U+FEFF: is_disguising_code_point) or of an invalid sequence as \xNN. The result never contains
// a line break. Made for reading, not reversible (a literal backslash is not escaped; see
// escape_text_reversible).
std::string escape_text(std::string_view s);

// escape_text, and a backslash as \\: distinct byte strings render differently (a literal
// backslash-n and a line break no longer look alike), and the bytes can be read back.
std::string escape_text_reversible(std::string_view s);

}  // namespace expiry
