// The parts of the overview beyond the namespace stats, and the timeline (Inspector::overview, Inspector::timeline; GET
// /v1/overview and /v1/timeline): each read bounded in cost whatever the size of the namespace.
// Every schedule read is O(log N) per bucket (ZCARD, ZCOUNT, ZRANGE 0 0); every stream read is
// capped in entries and in bytes, in pages, and keeps only the fields it uses. What the Redis
// user may not read (XINFO, PUBSUB under a narrow ACL) is nullopt, not an error.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace expiry {

// Stream entries read at most, across the streams, for the activity sample and the dead-letter
// reasons; and the bytes read at most for each (io/sync/stream_scan.h: payloads cost their size
// even where only a few fields are used), in pages of kScanPageBytes.
constexpr long long kActivitySampleEntries = 2000;
constexpr long long kDeadReasonScan = 1000;
constexpr size_t kActivityScanBytes = 4u << 20;
constexpr size_t kDeadReasonScanBytes = 1u << 20;
constexpr size_t kScanPageBytes = 256u << 10;
// The window of the forwarded rate and lateness.
constexpr long long kActivityWindowMs = 60'000;
// Consumer groups whose consumers are read (XINFO CONSUMERS per stream and group), and the
// consumers, relays and groups named at most.
constexpr size_t kMaxGroupReads = 256;
constexpr size_t kMaxNamesListed = 100;

// The entries forwarded in the last kActivityWindowMs (at most kActivitySampleEntries, capped per
// stream and in bytes: a capped stream's rate is taken over the time its sample covers), and
// their lateness (fired_ms - due_ms, where lateness applies).
struct ActivitySample {
  long long window_ms = kActivityWindowMs;
  long long sampled = 0;             // entries read
  bool capped = false;               // some stream had more in the window than was read
  double forwarded_per_second = 0;   // not rounded
  std::optional<long long> lateness_p50_ms;
  std::optional<long long> lateness_p99_ms;
};

struct ConsumerInfo {
  std::string name;
  long long pending = 0;  // summed over the streams
  long long idle_ms = 0;  // the smallest over the streams
};

// One consumer group across the default streams it reads.
struct ConsumerGroupInfo {
  std::string name;
  long long streams = 0;           // streams it reads
  long long pending = 0;
  std::optional<long long> lag;    // nullopt as soon as one stream's is unknown
  size_t consumer_count = 0;
  std::vector<ConsumerInfo> consumers;  // by name, the first kMaxNamesListed
};

// The dead letters: all of them, and the reasons of the newest kDeadReasonScan.
struct DeadCounts {
  long long total = 0;
  long long scanned = 0;
  std::map<std::string, long long> by_reason;  // "" for an entry without a reason
};

// The relays connected now: each subscribes to its own health channel NS:health:<instance> (on
// every primary of a cluster).
struct RelayInfo {
  size_t count = 0;
  std::vector<std::string> instances;  // sorted, the first kMaxNamesListed
};

// The tasks due in each bar of one TimelineRange (timeline_ranges.h), summed over the buckets.
struct TimelineBars {
  std::string name;
  long long step_ms = 0;
  std::vector<long long> counts;
};

struct Timeline {
  long long now_ms = 0;
  long long overdue = 0;     // due at or before now_ms
  long long beyond = 0;      // due after now_ms + horizon_ms
  long long horizon_ms = 0;  // the longest range's span
  std::vector<TimelineBars> ranges;  // one per kTimelineRanges, in order
};

}  // namespace expiry
