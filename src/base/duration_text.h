// pause --for: a duration as milliseconds, or with a unit suffix. Pure.
#pragma once

#include <optional>
#include <string_view>

namespace expiry {

// The longest duration accepted (about 10 years): longer pauses are surely typos.
constexpr long long kMaxDurationMs = 10LL * 366 * 24 * 3600 * 1000;

// "1500" or "1500ms" (milliseconds), "30s", "5m", "2h": decimal digits, then an optional unit
// ms, s, m or h, nothing else (no sign, no space, no fraction). Returns the milliseconds, or
// nullopt when the text is not such a duration, is 0 or exceeds kMaxDurationMs.
std::optional<long long> parse_duration_ms(std::string_view text);

}  // namespace expiry
