// Instants as text: ISO-8601 in UTC and in a zone's local time with its offset, and the time
// arguments of the recur commands (--after, --start, --end). Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "recur/time_zone.h"

namespace expiry {

// The instants that print with four-digit years: 0000-01-01T00:00:00.000Z to
// 9999-12-31T23:59:59.999Z. Occurrence searches stop at the last.
constexpr std::int64_t kMinIsoTimeMs = -62167219200000LL;
constexpr std::int64_t kMaxIsoTimeMs = 253402300799999LL;

// "2026-03-29T01:00:00.000Z". utc_ms within [kMinIsoTimeMs, kMaxIsoTimeMs].
std::string format_utc_iso(std::int64_t utc_ms);

// "2026-03-29T03:00:00.000+02:00": the local time in `zone` and the offset in force, always
// as +HH:MM or -HH:MM ("+00:00" in UTC). Offsets with seconds (local mean time before about 1900)
// show their hours and minutes only.
std::string format_local_iso(std::int64_t utc_ms, const TimeZone& zone);

// A time argument as UTC epoch ms:
//   "1774746000000"                      epoch milliseconds (digits, optionally a leading '-')
//   "2026-03-29T01:00:00Z"               UTC ('Z' or 'z')
//   "2026-03-29T03:00:00+02:00"          with an offset (+HH:MM, -HH:MM, +HHMM or +HH)
//   "2026-03-29T03:00:00"                local time in `zone`
// The date and time are YYYY-MM-DD, then 'T' (or 't' or one space), then HH:MM, optionally :SS
// and optionally .f to .fff (milliseconds). A local time that a daylight-saving gap skips is an
// error; one that a backward transition repeats is its earlier instant. Throws ConfigError
// naming the text and what was expected.
std::int64_t parse_time_arg(std::string_view text, const TimeZone& zone);

}  // namespace expiry
