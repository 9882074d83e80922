// What the bench reads from Redis about Redis itself: INFO fields, per-command call counts
// (INFO commandstats), memory, and how long single calls blocked the server (SLOWLOG with
// slowlog-log-slower-than 5000 µs, and LATENCY with latency-monitor-threshold 5 ms).
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "io/sync/sync_connection.h"

namespace expiry::bench {

constexpr long long kBlockingThresholdUs = 5000;  // a call longer than this "blocks Redis"

// Sets the slowlog and latency-monitor thresholds the bench reports against.
void configure_redis_for_bench(SyncConnection& conn);

// The "name:value" lines of INFO <section>.
std::map<std::string, std::string> info_fields(SyncConnection& conn, const std::string& section);
// The "name:value" lines of an INFO reply's text.
std::map<std::string, std::string> parse_info(const std::string& text);
long long info_integer(SyncConnection& conn, const std::string& section, const std::string& field);
// calls per command, from INFO commandstats ("cmdstat_fcall" -> "fcall").
std::map<std::string, long long> command_calls(SyncConnection& conn);
// The same, from the text of an INFO commandstats reply (e.g. one cluster node's).
std::map<std::string, long long> command_calls_in(const std::string& info_text);
// microseconds Redis spent per command, from INFO commandstats (usec; FCALL's include its inner calls).
std::map<std::string, long long> command_usec(SyncConnection& conn);
// INFO commandstats calls and usec per command, and INFO cpu, at one moment; `delta` gives what a
// window cost. usec of FCALL/EVALSHA includes the commands its script ran, which commandstats also
// counts under their own names (Redis 7): summing every row counts script work twice.
struct CommandCost {
  long long calls = 0;
  long long usec = 0;
};
struct RedisCostSnapshot {
  std::map<std::string, CommandCost> commands;
  double cpu_seconds = 0;
};
RedisCostSnapshot redis_cost_snapshot(SyncConnection& conn);
// {"cpu_seconds", "commands": {name: {calls, usec}}} of what happened between `before` and `after`
// (commands without a call in the window are left out).
nlohmann::json redis_cost_delta(const RedisCostSnapshot& before, const RedisCostSnapshot& after);

// keys and expires of db0 from INFO keyspace (0 when the db is empty).
struct KeyspaceCounts {
  long long keys = 0;
  long long expires = 0;
};
KeyspaceCounts keyspace_db0(SyncConnection& conn);
// Redis TIME in microseconds.
long long redis_time_us(SyncConnection& conn);
// CPU time Redis has used, INFO cpu used_cpu_sys + used_cpu_user, in seconds.
double redis_cpu_seconds(SyncConnection& conn);

// Calls slower than the threshold (SLOWLOG) and latency events (LATENCY LATEST) in a window.
struct BlockingSummary {
  size_t slow_calls = 0;        // SLOWLOG entries (>= 5 ms) in the window
  long long max_call_us = 0;    // the longest of them (0: none)
  std::string worst_call;       // its command and client name
  long long latency_max_ms = 0; // largest LATENCY LATEST max (any event, e.g. expire-cycle)
  std::string latency_events;   // "event:max_ms ..." of every event that crossed 5 ms
  nlohmann::json to_json() const;
};

class BlockingWatch {
 public:
  // SLOWLOG RESET and LATENCY RESET: the window starts now.
  explicit BlockingWatch(SyncConnection& conn);
  BlockingSummary finish(SyncConnection& conn) const;
};

}  // namespace expiry::bench
