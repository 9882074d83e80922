// See audit_trail.h.
#include "inspector/audit_trail.h"

#include <algorithm>

#include "base/errors.h"
#include "io/sync/routed_client.h"
#include "io/sync/stream_scan.h"
#include "redis/hash_slot.h"

namespace expiry {

void AuditTrail::append(const AuditRecord& record) {
  const Reply reply = redis_.command(audit_append_argv(ns_, record, max_entries_), key_hash_slot(audit_stream_key(ns_)));
  if (reply.type == Reply::Type::Error) throw ReplyError("XADD " + audit_stream_key(ns_) + ": " + reply.str);
}

AuditPage AuditTrail::read(const AuditQuery& query) {
  if (const auto error = audit_query_error(query)) throw ConfigError(*error);
  const bool filtered = !query.actor.empty() || !query.action.empty() || !query.via.empty() || !query.target.empty();
  AuditPage page;
  std::string end = query.before.empty() ? "+" : "(" + query.before;
  long long examined = 0;
  while (true) {
    StreamRange range;
    range.slot = key_hash_slot(audit_stream_key(ns_));
    range.key = audit_stream_key(ns_);
    range.newest_first = true;
    range.end = end;
    range.max_entries = filtered ? std::min<long long>(1000, kMaxAuditExamined - examined)
                                 : query.count - static_cast<long long>(page.records.size());
    ScanBudget budget;
    budget.max_bytes = 8u << 20;  // records are small (texts cut to kMaxAuditTextBytes)
    const ScannedRange scanned = scan_streams(redis_, {range}, budget).at(0);
    if (scanned.error) throw ReplyError("XREVRANGE " + range.key + ": " + scanned.error->str);
    for (const ScannedEntry& e : scanned.entries) {
      ++examined;
      end = "(" + e.id;
      AuditRecord r = audit_record_from_entry(e.id, e.fields);
      if (!audit_matches(r, query)) continue;
      page.records.push_back(std::move(r));
      if (static_cast<long long>(page.records.size()) >= query.count) {
        page.next_before = e.id;
        return page;
      }
    }
    if (scanned.entries.empty() || scanned.complete) return page;
    if (examined >= kMaxAuditExamined) {
      page.next_before = end.substr(1);
      return page;
    }
  }
}

}  // namespace expiry
