// tail: prints the entries arriving in a stream (plain XREAD, no consumer group). With bucket
// streams (several buckets, or a cluster) it polls every bucket stream, one XREAD each (a
// multi-stream XREAD is CROSSSLOT on a cluster), pipelined per node, and prints what one poll
// brought in entry-id order.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "inspector/entry_format.h"
#include "inspector/inspector.h"

namespace expiry {
namespace {

using Clock = std::chrono::steady_clock;
constexpr long long kBlockSliceMs = 1000;  // one XREAD BLOCK; well under the command timeout
constexpr long long kMaxBatch = 100;
constexpr auto kPollInterval = std::chrono::milliseconds(100);  // bucket streams: between empty polls

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

// Prints `arrived` as run_tail says, moving each stream's `after` past what it printed and
// counting in `printed` (at most options.count, when not 0). False when stdout went away.
bool print_arrived(const std::vector<StreamArrival>& arrived, const TailOptions& options, std::vector<std::string>& after,
                   long long& printed) {
  for (const StreamArrival& a : arrived) {
    if (options.count != 0 && printed >= options.count) break;
    after[a.stream] = a.entry.entry_id;
    std::cout << (options.json ? format_stream_entry_json(a.entry.entry_id, a.entry.fields)
                               : format_stream_entry(a.entry.entry_id, a.entry.fields))
              << "\n";
    ++printed;
  }
  std::cout.flush();
  return static_cast<bool>(std::cout);  // the reader may go away (e.g. `| head`); SIGPIPE is ignored
}

}  // namespace

int run_tail(const CtlTarget& target, const TailOptions& options) {
  if (options.count < 0) throw ConfigError("--count must not be negative");
  if (options.timeout_ms < 0) throw ConfigError("--timeout-ms must not be negative");
  if (!valid_from(options.from)) {
    throw ConfigError("--from must be '$' or a stream entry id such as 0 or 1700000000000-0, got '" + options.from +
                      "'");
  }
  CtlSession session(target);
  Inspector inspector(session.producer);
  const bool polled = session.layout.bucket_streams();
  // One stream: only a hint; a refused EXISTS (e.g. an ACL without it) leaves the errors to XREAD.
  if (!polled && inspector.stream_exists(0) == std::optional<bool>(false)) {
    std::cerr << "expiry-ctl: stream " << escape_text(target.stream)
              << " does not exist yet; waiting for the relay to create it ...\n";
  }
  std::vector<std::string> after =
      options.from == "$" ? inspector.newest_entry_ids() : std::vector<std::string>(session.layout.streams().size(), options.from);

  long long printed = 0;
  auto quiet_since = Clock::now();
  while (options.count == 0 || printed < options.count) {
    const long long quiet = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - quiet_since).count();
    // One stream blocks in XREAD for a slice; bucket streams are polled, with a pause between empty polls.
    long long block = kBlockSliceMs;
    if (options.timeout_ms > 0) {
      if (quiet >= options.timeout_ms) break;
      block = std::min(block, options.timeout_ms - quiet);
    }
    const long long batch = options.count == 0 ? kMaxBatch : std::min(kMaxBatch, options.count - printed);
    const std::vector<StreamArrival> arrived = inspector.read_streams_after(after, batch, block);
    if (arrived.empty()) {
      if (polled) std::this_thread::sleep_for(std::min(kPollInterval, std::chrono::milliseconds(block)));
      continue;
    }
    if (!print_arrived(arrived, options, after, printed)) return kExitOk;
    quiet_since = Clock::now();
  }
  return kExitOk;
}

}  // namespace expiry
