// Range reads of streams bounded in bytes as well as entries, for the summaries that the API
// and expiry-ctl print (the console's activity and dead-letter reasons, a task's state, dead
// list). Redis cannot leave a field out of XRANGE, so a stream of 64 KiB payloads costs 64 KiB
// per entry however few fields are used: one XRANGE COUNT 2000 there is a 128 MB reply that
// holds Redis for a second. scan_streams reads in pages whose COUNT follows the sizes seen so
// far (about page_bytes per round, across the streams), keeps only the named fields of each
// entry, and stops at max_bytes read in all: no reply is much over page_bytes unless a single
// entry is, and the caller's memory holds only what it keeps.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/sync/cluster_client.h"
#include "redis/reply.h"

namespace expiry {

class RoutedClient;

struct StreamRange {
  int slot = 0;
  std::string key;
  bool newest_first = false;  // XREVRANGE from `end` down to `start`; else XRANGE up
  std::string start = "-";    // an XRANGE bound: "-", an id, or "(" id (exclusive)
  std::string end = "+";
  long long max_entries = 0;  // read at most this many (> 0)
};

struct ScannedEntry {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;  // only the kept ones, in the entry's order

  std::optional<std::string> field(std::string_view name) const;
};

struct ScannedRange {
  std::vector<ScannedEntry> entries;  // in the order read
  bool complete = false;              // the range's end was reached: no entry of it was left unread
  std::optional<Reply> error;         // the first page's error reply (a missing key is no error: empty)
};

struct ScanBudget {
  size_t max_bytes = 4u << 20;    // ids, names and values read in all, across the ranges
  size_t page_bytes = 256u << 10;  // aimed at per round of pages (one page per unfinished range)
  std::vector<std::string> keep;  // the fields kept; empty: all of them
};

// Reads the ranges in rounds, one pipelined page per unfinished range each round. A range ends
// when its end is reached, it has max_entries, or its page failed (error set; reading goes on for
// the others). The scan stops, leaving ranges incomplete, once max_bytes are read. Throws IoError
// if the connection is lost.
std::vector<ScannedRange> scan_streams(RoutedClient& redis, const std::vector<StreamRange>& ranges,
                                       const ScanBudget& budget);

}  // namespace expiry
