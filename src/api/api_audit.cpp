// See api_audit.h.
#include "api/api_audit.h"

#include <nlohmann/json.hpp>

#include "base/integers.h"

namespace expiry {
namespace {

// The JSON value as text: a string as it is, anything else as JSON.
std::string text_of(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "a, b, c" of the first items' `key` (or the items themselves), then "..." when more.
std::string list_of(const nlohmann::json& items, const char* key) {
  std::string out;
  size_t listed = 0;
  for (const auto& item : items) {
    if (listed == 10) return out + ", ...";
    const nlohmann::json& v = key != nullptr && item.is_object() && item.contains(key) ? item.at(key) : item;
    out += (listed++ == 0 ? "" : ", ") + text_of(v);
  }
  return out;
}

}  // namespace

std::string audit_action(const std::string& method, const RouteMatch& match) { return method + " " + match.label; }

std::string audit_target(const RouteMatch& match, const std::string& body) {
  if (!match.id.empty()) return match.id;
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (!j.is_object()) return "";
  if (j.contains("prefix")) return "prefix=" + text_of(j.at("prefix"));
  if (j.contains("due_from_ms") || j.contains("due_to_ms")) {
    return "due=[" + (j.contains("due_from_ms") ? text_of(j.at("due_from_ms")) : std::string()) + "," +
           (j.contains("due_to_ms") ? text_of(j.at("due_to_ms")) : std::string()) + ")";
  }
  if (j.contains("entries") && j.at("entries").is_array()) return "entries=" + list_of(j.at("entries"), nullptr);
  if (j.contains("all") && j.at("all") == true) return "all";
  if (j.contains("tasks") && j.at("tasks").is_array()) {
    const auto& tasks = j.at("tasks");
    return std::to_string(tasks.size()) + " task" + (tasks.size() == 1 ? "" : "s") + ": " + list_of(tasks, "id");
  }
  if (j.contains("for_ms")) return "for_ms=" + text_of(j.at("for_ms"));
  return "";
}

std::string audit_outcome(int status, const std::string& content_type, const std::string& body) {
  std::string out = std::to_string(status);
  if (status < 400 || content_type.find("problem+json") == std::string::npos) return out;
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("detail") && j.at("detail").is_string()) out += ": " + j.at("detail").get<std::string>();
  return out;
}

std::variant<AuditQuery, std::string> parse_audit_query(const std::multimap<std::string, std::string>& query) {
  AuditQuery q;
  for (const auto& [key, value] : query) {
    if (key == "count") {
      const auto n = parse_int64(value);
      if (!n) return "count must be an integer 1.." + std::to_string(kMaxAuditCount);
      q.count = *n;
    } else if (key == "before") {
      q.before = value;
    } else if (key == "actor") {
      q.actor = value;
    } else if (key == "action") {
      q.action = value;
    } else if (key == "via") {
      q.via = value;
    } else if (key == "target") {
      q.target = value;
    } else {
      return "unknown query parameter '" + key + "' (count, before, actor, action, via, target)";
    }
  }
  if (const auto error = audit_query_error(q)) return *error;
  return q;
}

}  // namespace expiry
