// The audit trail's records (docs/api.md, "Audit trail"): who did which write or admin action,
// to what, with which outcome, through expiry-api or expiry-ctl. A record is one entry of the
// stream NS:audit; its time is the entry id's (Redis's clock). Pure.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace expiry {

// The most records kept by default (XADD MAXLEN ~): at 10,000 writes a second this is ten
// seconds of them, at one a second more than a day; set audit_max_entries to keep more.
constexpr long long kDefaultAuditMaxEntries = 100000;
// The longest target and outcome recorded; longer ones end in "...".
constexpr size_t kMaxAuditTextBytes = 512;

struct AuditRecord {
  std::string entry_id;  // set when read back: "<ms>-<seq>"
  std::string actor;     // the token's name (expiry-api), or the OS user (expiry-ctl)
  std::string via;       // "api" or "cli"
  std::string action;    // "PUT /v1/tasks/{id}", "POST /v1/dead/purge", "cancel", "dead purge" ...
  std::string target;    // the id, "prefix=P", "due=[A,B)", "entries=E1,E2", "3 tasks: a, b, c", or empty
  std::string outcome;   // "201", "403: <detail>", "exit 0", "exit 1: <message>"

  // The entry id's milliseconds; 0 when not read back.
  long long time_ms() const;
};

std::string audit_stream_key(const std::string& ns);

// XADD NS:audit MAXLEN ~ max_entries * with the record's fields (texts cut to kMaxAuditTextBytes).
std::vector<std::string> audit_append_argv(const std::string& ns, const AuditRecord& record, long long max_entries);

// The record of a stream entry's fields (a missing field: empty).
AuditRecord audit_record_from_entry(std::string entry_id, const std::vector<std::pair<std::string, std::string>>& fields);

// What to read back: newest first, `count` records matching every filter given.
struct AuditQuery {
  long long count = 100;  // 1..kMaxAuditCount
  std::string before;     // an entry id: only older records (a page's next_before); empty: the newest
  std::string actor;      // exact; empty: any
  std::string action;     // a substring ("dead", "DELETE"); empty: any
  std::string via;        // "api" or "cli"; empty: any
  std::string target;     // a substring; empty: any
};
constexpr long long kMaxAuditCount = 1000;
// At most this many records are examined for one page of a filtered read.
constexpr long long kMaxAuditExamined = 20000;

bool audit_matches(const AuditRecord& record, const AuditQuery& query);

// Why `query` cannot be read (count out of range, a bad `before`, an unknown `via`); nullopt: it can.
std::optional<std::string> audit_query_error(const AuditQuery& query);

struct AuditPage {
  std::vector<AuditRecord> records;       // newest first
  std::optional<std::string> next_before;  // more may be older: pass as `before`; nullopt: the end
};

nlohmann::json audit_record_json(const AuditRecord& record);
nlohmann::json audit_page_json(const AuditPage& page);
// One line of `expiry-ctl audit`: "<UTC time>  <actor> via <via>  <action>  <target>  -> <outcome>".
std::string audit_record_line(const AuditRecord& record);

// The text cut to kMaxAuditTextBytes (at a UTF-8 boundary), ending in "..." when cut.
std::string audit_text(std::string text);

}  // namespace expiry
