// See resend_policy.h.
#include "redis/resend_policy.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace expiry {
namespace {

std::string upper(const std::string& s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

}  // namespace

bool resend_is_safe(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  static const std::set<std::string> kReads = {
      "FCALL_RO", "GET",    "MGET",   "EXISTS",    "TYPE",   "TTL",       "PTTL",  "HGET",    "HGETALL",
      "HMGET",    "ZRANGE", "ZRANGEBYSCORE", "ZCARD", "ZSCORE", "ZCOUNT",  "XRANGE", "XREVRANGE", "XLEN",
      "XINFO",    "XPENDING", "SCAN", "INFO",      "PING",   "TIME",      "ROLE",  "DBSIZE",  "FUNCTION"};
  const std::string name = upper(argv[0]);
  if (name == "FUNCTION") return argv.size() > 1 && upper(argv[1]) == "LIST";
  if (kReads.count(name) != 0) return true;
  if (name != "FCALL" || argv.size() < 2) return false;
  const std::string& function = argv[1];
  static const std::set<std::string> kReplaces = {"expiry_v2_schedule", "expiry_v2_schedule_many", "expiry_schedule",
                                                  "expiry_schedule_many"};
  if (kReplaces.count(function) != 0) return true;
  // expiry_v2_reschedule (and v1 expiry_reschedule) KEYS(3) ARGV: id, 'delay'|'at', ms[, db]: numkeys at argv[2].
  return (function == "expiry_v2_reschedule" || function == "expiry_reschedule") && argv.size() > 7 &&
         argv[2] == "3" && argv[7] == "at";
}

}  // namespace expiry
