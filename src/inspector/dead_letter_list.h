// The oldest dead letters across the dead-letter streams, as `expiry-ctl dead list` and
// GET /v1/dead show them: the fields a listing prints, never the payloads (each stream is read
// in pages bounded in bytes, io/sync/stream_scan.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "inspector/dead_letter_refs.h"

namespace expiry {

class RoutedClient;

struct DeadLetterSummary {
  DeadRef ref;
  std::optional<std::string> task_id, reason, deliveries, original_stream, original_id;
};

struct DeadLetterList {
  std::vector<DeadLetterSummary> entries;  // oldest first across the streams
  bool more = false;                       // entries beyond these may follow
};

// Bytes read at most by one listing (ids and the listed fields are kept; payloads are read and
// dropped page by page). A listing that reaches it says `more`.
constexpr size_t kDeadListScanBytes = 16u << 20;

// The oldest `limit` (> 0) dead letters of `streams`. Throws ReplyError if a stream cannot be
// read, IoError if the connection is lost.
DeadLetterList list_dead_letter_summaries(RoutedClient& redis, const std::vector<DeadStream>& streams, long long limit);

}  // namespace expiry
