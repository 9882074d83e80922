// See audit_record.h.
#include "inspector/audit_record.h"

#include <ctime>

#include "base/integers.h"
#include "base/text_escape.h"

namespace expiry {

long long AuditRecord::time_ms() const {
  const auto ms = parse_int64(entry_id.substr(0, entry_id.find('-')));
  return ms ? *ms : 0;
}

std::string audit_stream_key(const std::string& ns) { return ns + ":audit"; }

std::string audit_text(std::string text) {
  if (text.size() <= kMaxAuditTextBytes) return text;
  size_t cut = kMaxAuditTextBytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  text.resize(cut);
  return text + "...";
}

std::vector<std::string> audit_append_argv(const std::string& ns, const AuditRecord& record, long long max_entries) {
  return {"XADD",  audit_stream_key(ns), "MAXLEN", "~",      std::to_string(max_entries), "*",
          "actor", record.actor,         "via",    record.via, "action", record.action,
          "target", audit_text(record.target), "outcome", audit_text(record.outcome)};
}

AuditRecord audit_record_from_entry(std::string entry_id,
                                    const std::vector<std::pair<std::string, std::string>>& fields) {
  AuditRecord r;
  r.entry_id = std::move(entry_id);
  for (const auto& [name, value] : fields) {
    if (name == "actor") r.actor = value;
    else if (name == "via") r.via = value;
    else if (name == "action") r.action = value;
    else if (name == "target") r.target = value;
    else if (name == "outcome") r.outcome = value;
  }
  return r;
}

bool audit_matches(const AuditRecord& record, const AuditQuery& query) {
  if (!query.actor.empty() && record.actor != query.actor) return false;
  if (!query.via.empty() && record.via != query.via) return false;
  if (!query.action.empty() && record.action.find(query.action) == std::string::npos) return false;
  if (!query.target.empty() && record.target.find(query.target) == std::string::npos) return false;
  return true;
}

std::optional<std::string> audit_query_error(const AuditQuery& query) {
  if (query.count < 1 || query.count > kMaxAuditCount) {
    return "count must be 1.." + std::to_string(kMaxAuditCount);
  }
  if (!query.via.empty() && query.via != "api" && query.via != "cli") return "via must be api or cli";
  if (!query.before.empty()) {
    const size_t dash = query.before.find('-');
    const auto ms = parse_int64(query.before.substr(0, dash));
    const auto seq = dash == std::string::npos ? ms : parse_int64(query.before.substr(dash + 1));
    if (!ms || !seq || *ms < 0 || *seq < 0) return "before must be an audit entry id (<ms>-<seq>)";
  }
  return std::nullopt;
}

nlohmann::json audit_record_json(const AuditRecord& record) {
  return {{"entry", record.entry_id},   {"time_ms", record.time_ms()}, {"actor", record.actor},
          {"via", record.via},          {"action", record.action},     {"target", record.target},
          {"outcome", record.outcome}};
}

nlohmann::json audit_page_json(const AuditPage& page) {
  nlohmann::json records = nlohmann::json::array();
  for (const AuditRecord& r : page.records) records.push_back(audit_record_json(r));
  return {{"records", records},
          {"count", page.records.size()},
          {"next_before", page.next_before ? nlohmann::json(*page.next_before) : nlohmann::json()}};
}

std::string audit_record_line(const AuditRecord& record) {
  const long long ms = record.time_ms();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char when[40];
  std::snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms % 1000);
  std::string line = std::string(when) + "  " + escape_text(record.actor) + " via " + escape_text(record.via) + "  " +
                     escape_text(record.action);
  if (!record.target.empty()) line += "  " + escape_text(record.target);
  return line + "  -> " + escape_text(record.outcome);
}

}  // namespace expiry
