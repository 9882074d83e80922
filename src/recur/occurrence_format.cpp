// See occurrence_format.h.
#include "recur/occurrence_format.h"

namespace expiry {

std::string occurrence_lines(const std::vector<Occurrence>& occurrences) {
  std::string out;
  for (const Occurrence& occurrence : occurrences) {
    out += occurrence.utc_iso;
    out += ' ';
    out += occurrence.local_iso;
    out += '\n';
  }
  return out;
}

nlohmann::json occurrences_json(const std::vector<Occurrence>& occurrences) {
  nlohmann::json list = nlohmann::json::array();
  for (const Occurrence& occurrence : occurrences) {
    list.push_back({{"utc_ms", occurrence.utc_ms}, {"utc", occurrence.utc_iso}, {"local", occurrence.local_iso}});
  }
  return nlohmann::json{{"occurrences", std::move(list)}};
}

}  // namespace expiry
