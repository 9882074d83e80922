// The audit trail of a namespace on the blocking client: expiry-api and expiry-ctl append a
// record (audit_record.h) after each write or admin action, and read pages of it back.
#pragma once

#include <string>

#include "inspector/audit_record.h"

namespace expiry {

class RoutedClient;

class AuditTrail {
 public:
  AuditTrail(RoutedClient& redis, std::string ns, long long max_entries = kDefaultAuditMaxEntries)
      : redis_(redis), ns_(std::move(ns)), max_entries_(max_entries) {}

  // Appends `record`. Throws IoError / ReplyError as the client does.
  void append(const AuditRecord& record);
  // The newest records matching `query` (older than query.before), examining at most
  // kMaxAuditExamined in bounded pages; next_before is set when older ones may remain. Throws
  // ConfigError for a query audit_query_error refuses.
  AuditPage read(const AuditQuery& query);

 private:
  RoutedClient& redis_;
  std::string ns_;
  long long max_entries_;
};

}  // namespace expiry
