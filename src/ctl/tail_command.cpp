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
#include "functions/stream_entry.h"
#include "inspector/entry_format.h"
#include "io/sync/sync_connection.h"

namespace expiry {
namespace {

using Clock = std::chrono::steady_clock;
constexpr long long kBlockSliceMs = 1000;  // one XREAD BLOCK; well under the command timeout
constexpr long long kMaxBatch = 100;
constexpr auto kPollInterval = std::chrono::milliseconds(100);  // bucket streams: between empty polls

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

// Polls every bucket stream of `layout` as run_tail says; returns its exit code.
int tail_buckets(RoutedClient& redis, const TaskPlacement& layout, const TailOptions& options) {
  const std::vector<std::string> streams = layout.streams();
  std::vector<std::string> after(streams.size(), options.from);
  if (options.from == "$") {
    std::vector<ClusterClient::Routed> last;
    for (size_t b = 0; b < streams.size(); ++b) {
      last.push_back({TaskPlacement::slot_of_bucket(static_cast<int>(b)), {"XREVRANGE", streams[b], "+", "-", "COUNT", "1"}});
    }
    const auto replies = redis.batch(last);
    for (size_t b = 0; b < streams.size(); ++b) {
      const Reply& r = expect_ok(replies[b], "XREVRANGE");
      after[b] = "0-0";
      if (r.type == Reply::Type::Array && !r.elements.empty() && r.elements[0].type == Reply::Type::Array &&
          !r.elements[0].elements.empty()) {
        after[b] = r.elements[0].elements[0].str;
      }
    }
  }
  struct Arrived {
    size_t bucket;
    StreamEntry entry;
  };
  long long printed = 0;
  auto quiet_since = Clock::now();
  while (options.count == 0 || printed < options.count) {
    const long long batch = options.count == 0 ? kMaxBatch : std::min(kMaxBatch, options.count - printed);
    std::vector<ClusterClient::Routed> reads;
    for (size_t b = 0; b < streams.size(); ++b) {
      reads.push_back({TaskPlacement::slot_of_bucket(static_cast<int>(b)),
                       {"XREAD", "COUNT", std::to_string(batch), "STREAMS", streams[b], after[b]}});
    }
    const auto replies = redis.batch(reads);
    std::vector<Arrived> arrived;
    for (size_t b = 0; b < streams.size(); ++b) {
      const Reply& r = expect_ok(replies[b], "XREAD");
      if (r.type != Reply::Type::Array) continue;  // Nil: nothing new
      for (const Reply& per_stream : r.elements) {
        if (per_stream.type != Reply::Type::Array || per_stream.elements.size() != 2) continue;
        for (StreamEntry& entry : parse_stream_entries(per_stream.elements[1])) arrived.push_back({b, std::move(entry)});
      }
    }
    if (arrived.empty()) {
      const long long quiet =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - quiet_since).count();
      if (options.timeout_ms > 0 && quiet >= options.timeout_ms) break;
      auto pause = std::chrono::milliseconds(kPollInterval);
      if (options.timeout_ms > 0) pause = std::min(pause, std::chrono::milliseconds(options.timeout_ms - quiet));
      std::this_thread::sleep_for(pause);
      continue;
    }
    std::stable_sort(arrived.begin(), arrived.end(), [](const Arrived& a, const Arrived& b) {
      return entry_id_before(a.entry.entry_id, b.entry.entry_id);
    });
    for (const Arrived& a : arrived) {
      if (options.count != 0 && printed >= options.count) break;
      after[a.bucket] = a.entry.entry_id;
      std::cout << (options.json ? format_stream_entry_json(a.entry.entry_id, a.entry.fields)
                                 : format_stream_entry(a.entry.entry_id, a.entry.fields))
                << "\n";
      ++printed;
    }
    std::cout.flush();
    if (!std::cout) return kExitOk;  // the reader went away (e.g. `| head`); SIGPIPE is ignored
    quiet_since = Clock::now();
  }
  return kExitOk;
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
  if (session.layout.bucket_streams()) return tail_buckets(session.redis, session.layout, options);
  const std::string& stream = target.stream;
  SyncConnection& conn = session.redis.single();
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
