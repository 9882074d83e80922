// Occurrences as `expiry-ctl recur preview` prints them: text lines or JSON. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "recur/occurrences.h"

namespace expiry {

// One line per occurrence, "<utc_iso> <local_iso>\n":
// "2026-03-29T01:00:00.000Z 2026-03-29T03:00:00.000+02:00\n". Empty for none.
std::string occurrence_lines(const std::vector<Occurrence>& occurrences);

// {"occurrences": [{"utc_ms": 1774746000000, "utc": "2026-03-29T01:00:00.000Z",
//                   "local": "2026-03-29T03:00:00.000+02:00"}, ...]}
nlohmann::json occurrences_json(const std::vector<Occurrence>& occurrences);

}  // namespace expiry
