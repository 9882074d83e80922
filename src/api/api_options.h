// What each worker's ApiService is told at start (api_config.h resolves it). Pure.
#pragma once

#include <cstddef>
#include <string>

#include "inspector/audit_record.h"

namespace expiry {

struct ApiOptions {
  size_t max_body_bytes = 1 << 20;
  std::string dead_stream;  // the single-bucket dead stream (empty: <stream>:dead), as expiry-ctl dead --dead-stream
  long long audit_max_entries = kDefaultAuditMaxEntries;  // the audit trail's retention (XADD MAXLEN ~); 0: none kept
};

}  // namespace expiry
