// Invariant checks of the fuzz targets. A failed check prints what broke and the offending
// value (escaped) and aborts, so libFuzzer records the input and a replay run fails loudly.
#pragma once

#include <string>
#include <string_view>

namespace expiry::fuzz {

[[noreturn]] void invariant_failed(std::string_view what, std::string_view detail);

inline void require(bool ok, std::string_view what, std::string_view detail = {}) {
  if (!ok) invariant_failed(what, detail);
}

// Known findings in src/ that the targets tolerate, so CI stays green until they are fixed
// (README.md lists them; their reproducers are in findings/). With EXPIRY_FUZZ_STRICT=1 nothing
// is tolerated. Delete a finding's tolerance once src/ is fixed.
bool tolerate_known_finding(std::string_view id);

// True if `s` is valid UTF-8, judged by nlohmann::json's strict dump: an oracle independent
// of the project's own UTF-8 checks (key_layout.cpp, text_escape.cpp).
bool json_accepts_utf8(std::string_view s);

}  // namespace expiry::fuzz
