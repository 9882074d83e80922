// See token_narrowing.h.
#include "api/token_narrowing.h"

#include "api/query_string.h"
#include "base/text_escape.h"

namespace expiry {

std::string outside_prefixes_detail(const TokenGrant& grant, const std::string& what) {
  std::string list;
  for (const std::string& p : grant.prefixes) list += (list.empty() ? "'" : ", '") + escape_text(p) + "'";
  return "token " + grant.name + " may address only ids starting with " + list + ", not " + what;
}

std::optional<std::string> narrowing_refusal(const TokenGrant& grant, const RouteMatch& match, const std::string& ns,
                                             const std::string& query) {
  if (!grant.ns.empty() && grant.ns != ns) {
    return "token " + grant.name + " is for namespace '" + escape_text(grant.ns) + "'; this expiry-api serves '" +
           escape_text(ns) + "'";
  }
  if (!grant.narrowed_by_prefix() || !match.route) return std::nullopt;
  switch (*match.route) {
    case Route::WhoAmI:
    case Route::SchedulePreviewRule:
    case Route::TaskBatch:        // checks each task's id itself
    case Route::TaskCancelRange:  // check their prefix themselves, and refuse a due range
    case Route::TaskRunNowRange:
      return std::nullopt;
    case Route::TaskList: {
      const auto pairs = query_pairs(query);
      std::string prefix;
      if (pairs) {
        const auto it = pairs->find("prefix");
        if (it != pairs->end()) prefix = it->second;
      }
      if (!prefix.empty() && grant.covers_prefix(prefix)) return std::nullopt;
      return outside_prefixes_detail(grant, prefix.empty() ? std::string("a list without ?prefix=")
                                                           : "the prefix '" + escape_text(prefix) + "'");
    }
    default:
      break;
  }
  if (!match.id.empty()) {
    if (grant.allows_id(match.id)) return std::nullopt;
    return outside_prefixes_detail(grant, "'" + escape_text(match.id) + "'");
  }
  return "token " + grant.name + " is limited to task-id prefixes and may not call " + match.label +
         ", which reaches tasks of every prefix";
}

}  // namespace expiry
