// Counts the commands clients send to Redis over a time window, from MONITOR: every line names
// its source, "[db addr]" for a client and "[db lua]" for a call made inside a script or
// function, so commands the relay sends are told apart from those its FCALLs run inside Redis.
// Speaks RESP over a plain socket: MONITOR replies are simple status lines.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "config/redis_url.h"

namespace expiry::bench {

struct MonitorCounts {
  std::map<std::string, long long> sent;    // command (lower case) -> count, from clients
  std::map<std::string, long long> inside;  // command -> count, run inside scripts/functions
  long long total_sent() const;
};

// Watches for `window` and returns the counts. Throws IoError if Redis cannot be reached or
// refuses MONITOR.
MonitorCounts monitor_commands(const RedisEndpoint& redis, std::chrono::milliseconds window);

}  // namespace expiry::bench
