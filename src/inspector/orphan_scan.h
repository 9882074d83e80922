// What an orphan scan finds (Inspector::scan_orphans, expiry-ctl check): trigger keys and shadow
// hashes whose id is not in the schedule (orphans, e.g. after the schedule ZSET was deleted from
// outside), what a repair did with them, and pending tasks in buckets no relay serves (a bucket
// not below the namespace's count: they would never fire), which a repair leaves alone.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "functions/key_layout.h"

namespace expiry {

struct OrphanScanOptions {
  bool repair = false;  // delete each orphan, if its id is still not scheduled
  int examples = 10;    // orphans and unserved shadow hashes named at most, each
};

struct OrphanKey {
  std::string key;
  std::string id;
  TaskKeyKind kind;
};

struct OrphanReport {
  uint64_t examined = 0;         // task keys SCAN returned (a key can come back twice)
  uint64_t orphan_shadows = 0;
  uint64_t orphan_triggers = 0;
  std::vector<OrphanKey> examples;  // the first `examples` orphans
  uint64_t deleted = 0;          // repair
  uint64_t kept_scheduled = 0;   // repair: scheduled again between the read and the delete
  uint64_t already_gone = 0;     // repair: claimed, cancelled or expired in between
  uint64_t unserved = 0;         // pending tasks in a bucket not below the bucket count
  std::set<int> unserved_buckets;
  std::vector<std::string> unserved_examples;  // their shadow hashes, the first `examples`

  uint64_t orphans() const { return orphan_shadows + orphan_triggers; }
};

}  // namespace expiry
