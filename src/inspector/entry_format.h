// Rendering of a forwarded task's stream entry, as `expiry-ctl tail` prints it: one text line,
// or one JSON object (--json); and the order of entry ids in which tail, the dead-letter listing
// and expiry-api's console merge streams. Pure.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace expiry {

// One name or value of a text line: escape_text_reversible (a backslash as \\, \n \r \t, other
// controls and invalid UTF-8 as \xNN), and in double quotes, with \" for a quote, when it is
// empty or holds a space (U+0020 or another Unicode space), a quote or '=', so that it reads as
// one token: `id="order 7"`, `id=a\\nb` (backslash, n) against `id=a\nb` (a line break).
std::string format_entry_token(std::string_view s);

// "<entry-id> id=.. via=.. due_ms=.. fired_ms=.. late_ms=<fired-due> [other=..] payload=..":
// absent fields are left out, late_ms only when due_ms and fired_ms are integers (and their
// difference fits), fields the relay does not write come in their order before the payload.
// Names and values are format_entry_token tokens, except the payload: always last, it runs to
// the end of the line unquoted (it may contain spaces), escaped like a token. One line, valid
// UTF-8.
std::string format_stream_entry(const std::string& entry_id,
                                const std::vector<std::pair<std::string, std::string>>& fields);

// One JSON object on one line, keys in this order:
//   {"entry_id": "..", "late_ms": N or null, "fields": {"id": "..", "payload": "..", ...},
//    "fields_b64": {"payload": "<base64>"}}
// "fields" holds every field whose value is valid UTF-8, as the string Redis stores (numbers
// too), in the entry's order; a value that is not UTF-8 is in "fields_b64" instead, base64
// (present only then). A name given twice keeps its last value (as late_ms reads it); a name
// that is not valid UTF-8 has its bad bytes replaced by U+FFFD.
std::string format_stream_entry_json(const std::string& entry_id,
                                     const std::vector<std::pair<std::string, std::string>>& fields);

// Orders stream entry ids ("<ms>-<seq>", or "<ms>") by time, then sequence; ids that do not
// parse come after those that do, in text order. tail merges the bucket streams by it.
bool entry_id_before(std::string_view a, std::string_view b);

}  // namespace expiry
