// One-line rendering of a forwarded task's stream entry, as `expiry-ctl tail` prints it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace expiry {

// "<entry-id> id=.. via=.. due_ms=.. fired_ms=.. late_ms=<fired-due> [other=..] payload=..":
// absent fields are left out, late_ms only when due_ms and fired_ms are integers, fields the
// relay does not write come in their order before the payload, which is always last (it may
// contain spaces). Values are rendered with escape_text, so the result is one line.
std::string format_stream_entry(const std::string& entry_id,
                                const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace expiry
