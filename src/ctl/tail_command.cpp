// tail: prints the entries arriving in a stream (plain XREAD, no consumer group).
#include <algorithm>
#include <chrono>
#include <iostream>

#include "ctl/ctl_commands.h"
#include "ctl/entry_format.h"
#include "protocol/stream_entry.h"
#include "io/sync/sync_connection.h"
#include "protocol/errors.h"
#include "protocol/text_escape.h"

namespace expiry {
namespace {

using Clock = std::chrono::steady_clock;
constexpr long long kBlockSliceMs = 1000;  // one XREAD BLOCK; well under the command timeout
constexpr long long kMaxBatch = 100;

// The id of the stream's last entry, or "0-0" when it has none: reading after it returns exactly
// the entries added from now on, even across several XREAD calls (unlike "$").
std::string last_entry_id(SyncConnection& conn, const std::string& stream) {
  const Reply r = conn.checked({"XREVRANGE", stream, "+", "-", "COUNT", "1"});
  if (r.type == Reply::Type::Array && !r.elements.empty() && r.elements[0].type == Reply::Type::Array &&
      !r.elements[0].elements.empty()) {
    return r.elements[0].elements[0].str;
  }
  return "0-0";
}

// "$", "<ms>" or "<ms>-<seq>".
bool valid_from(const std::string& from) {
  if (from == "$") return true;
  const auto dash = from.find('-');
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 20 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dash == std::string::npos) return digits(from);
  return digits(from.substr(0, dash)) && digits(from.substr(dash + 1));
}

}  // namespace

int run_tail(const CtlTarget& target, const TailOptions& options) {
  if (options.count < 0) throw ConfigError("--count must not be negative");
  if (options.timeout_ms < 0) throw ConfigError("--timeout-ms must not be negative");
  if (!valid_from(options.from)) {
    throw ConfigError("--from must be '$' or a stream entry id such as 0 or 1700000000000-0, got '" + options.from +
                      "'");
  }
  const std::string& stream = target.stream;
  SyncConnection conn(target.redis);
  // Only a hint: a refused EXISTS (e.g. an ACL without it) leaves the errors to XREAD.
  const Reply exists = conn.command({"EXISTS", stream});
  if (exists.type == Reply::Type::Integer && exists.integer == 0) {
    std::cerr << "expiry-ctl: stream " << escape_text(stream)
              << " does not exist yet; waiting for the relay to create it ...\n";
  }
  std::string after = options.from == "$" ? last_entry_id(conn, stream) : options.from;

  long long printed = 0;
  auto quiet_since = Clock::now();
  while (options.count == 0 || printed < options.count) {
    long long block = kBlockSliceMs;
    if (options.timeout_ms > 0) {
      const long long quiet =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - quiet_since).count();
      if (quiet >= options.timeout_ms) break;
      block = std::min(block, options.timeout_ms - quiet);
    }
    const long long batch = options.count == 0 ? kMaxBatch : std::min(kMaxBatch, options.count - printed);
    const Reply r = conn.checked({"XREAD", "COUNT", std::to_string(batch), "BLOCK", std::to_string(block), "STREAMS",
                                  stream, after});
    if (r.type != Reply::Type::Array) continue;  // Nil: nothing arrived within `block`
    for (const Reply& per_stream : r.elements) {
      if (per_stream.type != Reply::Type::Array || per_stream.elements.size() != 2) continue;
      for (const StreamEntry& entry : parse_stream_entries(per_stream.elements[1])) {
        after = entry.entry_id;
        std::cout << (options.json ? format_stream_entry_json(after, entry.fields)
                                   : format_stream_entry(after, entry.fields))
                  << "\n";
        ++printed;
      }
    }
    std::cout.flush();
    if (!std::cout) return kExitOk;  // the reader went away (e.g. `| head`); SIGPIPE is ignored
    quiet_since = Clock::now();
  }
  return kExitOk;
}

}  // namespace expiry
