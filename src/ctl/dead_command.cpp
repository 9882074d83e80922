// dead list / show / purge / replay: the dead-letter streams the consumers' expiry_dead_letter
// writes. Every read is a bounded XRANGE (the listing's bounded in bytes too); purge deletes in bounded batches; replay is one
// FCALL expiry_replay_dead per entry, so each is safe while consumers and relays run.
#include <algorithm>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/dead_letters.h"
#include "ctl/entry_format.h"
#include "ctl/task_listing.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "inspector/dead_letter_list.h"
#include "io/sync/sync_connection.h"
#include "producer/task.h"
#include "redis/redis_error.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

constexpr long long kBatch = 500;  // entries per XRANGE / XDEL of purge and replay --all

struct DeadEntry {
  DeadRef ref;
  std::vector<std::pair<std::string, std::string>> fields;
};

std::string json_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string text_or(const std::optional<std::string>& v, const char* absent) { return v ? *v : absent; }

// The entries of an XRANGE reply.
std::vector<DeadEntry> entries_of(const Reply& reply, size_t stream, const std::string& what) {
  expect_ok(reply, what);
  if (reply.type != Reply::Type::Array) throw ReplyError(what + ": unexpected reply " + reply.describe());
  std::vector<DeadEntry> out;
  for (const Reply& e : reply.elements) {
    if (e.type != Reply::Type::Array || e.elements.size() != 2) {
      throw ReplyError(what + ": unexpected entry " + e.describe());
    }
    out.push_back({{stream, e.elements[0].str}, field_pairs(e.elements[1])});
  }
  return out;
}

std::optional<std::string> field_of(const DeadEntry& e, std::string_view name) {
  for (const auto& [k, v] : e.fields) {
    if (k == name) return v;
  }
  return std::nullopt;
}

// Reads the named entries (one XRANGE id id each, pipelined); nullopt for those gone.
std::vector<std::optional<DeadEntry>> read_entries(RoutedClient& redis, const std::vector<DeadStream>& streams,
                                                   const std::vector<DeadRef>& refs) {
  std::vector<ClusterClient::Routed> commands;
  for (const DeadRef& r : refs) {
    commands.push_back({streams[r.stream].slot, {"XRANGE", streams[r.stream].key, r.entry_id, r.entry_id}});
  }
  const std::vector<Reply> replies = commands.empty() ? std::vector<Reply>{} : redis.batch(commands);
  std::vector<std::optional<DeadEntry>> out;
  for (size_t i = 0; i < refs.size(); ++i) {
    auto found = entries_of(replies[i], refs[i].stream, "XRANGE " + streams[refs[i].stream].key);
    if (found.empty()) {
      out.emplace_back();
    } else {
      out.emplace_back(std::move(found.front()));
    }
  }
  return out;
}

std::vector<DeadRef> parse_refs(const std::vector<DeadStream>& streams, const std::vector<std::string>& texts) {
  std::vector<DeadRef> refs;
  for (const std::string& t : texts) {
    std::string why;
    auto ref = parse_dead_ref(streams, t, &why);
    if (!ref) throw ConfigError("entry '" + escape_text(t) + "': " + why);
    refs.push_back(*ref);
  }
  return refs;
}

// Calls `visit` with every entry of `stream` up to `end` (an XRANGE end: "+", an id, or
// "(id"), kBatch at a time, each batch after the last one read.
template <typename Visit>
void for_each_batch(RoutedClient& redis, const std::vector<DeadStream>& streams, size_t s, const std::string& end,
                    Visit visit) {
  std::string start = "-";
  while (true) {
    const Reply r = redis.command({"XRANGE", streams[s].key, start, end, "COUNT", std::to_string(kBatch)},
                                  streams[s].slot);
    const std::vector<DeadEntry> batch = entries_of(r, s, "XRANGE " + streams[s].key);
    if (batch.empty()) return;
    visit(batch);
    if (static_cast<long long>(batch.size()) < kBatch) return;
    start = "(" + batch.back().ref.entry_id;
  }
}

// The newest entry id of a stream when the command starts, or nullopt when it is empty: --all
// stops there, so dead letters written meanwhile are left alone.
std::optional<std::string> last_entry_id(RoutedClient& redis, const DeadStream& stream) {
  const Reply r = redis.command({"XREVRANGE", stream.key, "+", "-", "COUNT", "1"}, stream.slot);
  const auto found = entries_of(r, 0, "XREVRANGE " + stream.key);
  if (found.empty()) return std::nullopt;
  return found.front().ref.entry_id;
}

}  // namespace

int run_dead_list(const CtlTarget& target, const DeadListOptions& options) {
  if (options.count < 1 || options.count > kMaxListCount) {
    throw ConfigError("--count must be between 1 and " + std::to_string(kMaxListCount));
  }
  CtlSession session(target);
  const auto streams = dead_streams(session.layout, options.dead_stream);
  const DeadLetterList listed = list_dead_letter_summaries(session.redis, streams, options.count);
  const bool more = listed.more;

  nlohmann::json entries = nlohmann::json::array();
  for (const DeadLetterSummary& e : listed.entries) {
    const std::string ref = format_dead_ref(streams, e.ref);
    const auto when = entry_id_ms(e.ref.entry_id);
    const auto iso = when ? iso8601_utc(*when) : std::nullopt;
    const auto& task = e.task_id;
    const auto& reason = e.reason;
    const auto& deliveries = e.deliveries;
    if (!options.json) {
      std::cout << format_entry_token(ref) << " " << text_or(iso, "-") << " task=" << format_entry_token(text_or(task, ""))
                << " reason=" << format_entry_token(text_or(reason, "")) << " deliveries="
                << format_entry_token(text_or(deliveries, "")) << "\n";
      continue;
    }
    nlohmann::json j = {{"entry", ref},
                        {"stream", streams[e.ref.stream].key},
                        {"entry_id", e.ref.entry_id},
                        {"when_ms", when ? nlohmann::json(*when) : nlohmann::json()},
                        {"when", iso ? nlohmann::json(*iso) : nlohmann::json()},
                        {"task_id", task ? nlohmann::json(*task) : nlohmann::json()},
                        {"reason", reason ? nlohmann::json(*reason) : nlohmann::json()},
                        {"deliveries", nlohmann::json()},
                        {"original_stream", nullptr},
                        {"original_id", nullptr}};
    if (deliveries) {
      if (auto n = to_integer(*deliveries)) j["deliveries"] = *n;
    }
    if (e.original_stream) j["original_stream"] = *e.original_stream;
    if (e.original_id) j["original_id"] = *e.original_id;
    entries.push_back(std::move(j));
  }
  if (options.json) {
    std::cout << json_dump({{"entries", entries}, {"count", listed.entries.size()}, {"more", more}}) << "\n";
  } else if (more) {
    std::cout.flush();
    std::cerr << "expiry-ctl: more dead letters follow (raise --count, or purge / replay these)\n";
  }
  return kExitOk;
}

int run_dead_show(const CtlTarget& target, const std::string& entry, bool json, const std::string& dead_stream) {
  CtlSession session(target);
  const auto streams = dead_streams(session.layout, dead_stream);
  const std::vector<DeadRef> refs = parse_refs(streams, {entry});
  const auto found = read_entries(session.redis, streams, refs);
  if (!found.front()) {
    std::cerr << "expiry-ctl: no dead entry " << escape_text(entry) << " in " << escape_text(streams[refs[0].stream].key)
              << " (replayed, purged or never there)\n";
    return kExitNotPending;
  }
  const DeadEntry& e = *found.front();
  const auto when = entry_id_ms(e.ref.entry_id);
  const auto iso = when ? iso8601_utc(*when) : std::nullopt;
  if (json) {
    auto j = nlohmann::json::parse(format_stream_entry_json(e.ref.entry_id, e.fields));
    j.erase("late_ms");
    j["entry"] = entry;
    j["stream"] = streams[e.ref.stream].key;
    j["when_ms"] = when ? nlohmann::json(*when) : nlohmann::json();
    j["when"] = iso ? nlohmann::json(*iso) : nlohmann::json();
    std::cout << json_dump(j) << "\n";
    return kExitOk;
  }
  std::cout << "entry: " << escape_text(entry) << "\n"
            << "stream: " << escape_text(streams[e.ref.stream].key) << "\n"
            << "when: " << text_or(iso, "-") << "\n";
  for (const auto& [k, v] : e.fields) std::cout << escape_text(k) << ": " << escape_text(v) << "\n";
  return kExitOk;
}

int run_dead_purge(const CtlTarget& target, const DeadPurgeOptions& options) {
  const int modes = (!options.entries.empty() ? 1 : 0) + (options.all ? 1 : 0) + (options.older_than_ms ? 1 : 0);
  if (modes != 1) throw ConfigError("dead purge needs exactly one of ENTRY..., --all or --older-than-ms");
  if (options.older_than_ms && *options.older_than_ms < 0) throw ConfigError("--older-than-ms must not be negative");
  CtlSession session(target);
  const auto streams = dead_streams(session.layout, options.dead_stream);
  if (!options.entries.empty()) {
    const std::vector<DeadRef> refs = parse_refs(streams, options.entries);
    std::vector<ClusterClient::Routed> commands;
    for (const DeadRef& r : refs) commands.push_back({streams[r.stream].slot, {"XDEL", streams[r.stream].key, r.entry_id}});
    const std::vector<Reply> replies = session.redis.batch(commands);
    long long purged = 0;
    for (size_t i = 0; i < refs.size(); ++i) {
      expect_ok(replies[i], "XDEL");
      if (replies[i].integer == 1) {
        ++purged;
      } else {
        std::cerr << "expiry-ctl: no dead entry " << escape_text(options.entries[i]) << " (already gone)\n";
      }
    }
    std::cout << "purged " << purged << " of " << refs.size() << "\n";
    return purged == static_cast<long long>(refs.size()) ? kExitOk : kExitNotPending;
  }
  std::string end_exclusive;
  if (options.older_than_ms) {
    const long long cutoff = session.producer.now_ms() - *options.older_than_ms;
    end_exclusive = "(" + std::to_string(std::max(0LL, cutoff)) + "-0";
  }
  long long purged = 0;
  for (size_t s = 0; s < streams.size(); ++s) {
    std::string end = end_exclusive;
    if (end.empty()) {
      const auto last = last_entry_id(session.redis, streams[s]);
      if (!last) continue;
      end = *last;
    }
    if (end == "(0-0") continue;
    for_each_batch(session.redis, streams, s, end, [&](const std::vector<DeadEntry>& batch) {
      std::vector<std::string> xdel = {"XDEL", streams[s].key};
      for (const DeadEntry& e : batch) xdel.push_back(e.ref.entry_id);
      const Reply r = session.redis.command(xdel, streams[s].slot);
      expect_ok(r, "XDEL");
      purged += r.integer;
    });
  }
  std::cout << "purged " << purged << "\n";
  return kExitOk;
}

int run_dead_replay(const CtlTarget& target, const DeadReplayOptions& options) {
  if (options.entries.empty() == !options.all) throw ConfigError("dead replay needs ENTRY... or --all (not both)");
  if (options.delay_ms < 0 || options.delay_ms > kMaxTimeMs) {
    throw ConfigError("--delay-ms must be between 0 and " + std::to_string(kMaxTimeMs));
  }
  CtlSession session(target);
  const TaskPlacement& layout = session.layout;
  const auto streams = dead_streams(layout, options.dead_stream);
  long long replayed = 0;
  long long gone = 0;
  // Replays one entry read before; false when it was gone by the time of the FCALL.
  auto replay = [&](const DeadEntry& e, const std::string& shown) {
    const DeadStream& dead = streams[e.ref.stream];
    const auto task = field_of(e, "id");
    if (!task || task_id_error(*task)) {
      throw ReplyError("dead entry " + shown + " holds no valid task id; it was left in place");
    }
    const KeyLayout keys = layout.keys_of_task(*task);
    const int slot = TaskPlacement::slot_of_bucket(keys.bucket());
    if (layout.cluster && slot != dead.slot) {
      throw ConfigError("dead entry " + shown + " (task " + escape_text(*task) + ") is in " + dead.key +
                        ", not in the slot of the task's bucket " + std::to_string(keys.bucket()) +
                        ": it cannot be replayed atomically; schedule the task and purge the entry by hand");
    }
    const Reply r = session.redis.fcall(
        {"FCALL", "expiry_replay_dead", "4", dead.key, keys.schedule_key(), keys.trigger_key(*task),
         keys.shadow_key(*task), e.ref.entry_id, *task, std::to_string(options.delay_ms),
         layout.default_stream_of_bucket(keys.bucket()), std::to_string(layout.db)},
        slot);
    if (r.type == Reply::Type::Error && r.str.find("already replayed or purged") != std::string::npos) {
      std::cerr << "expiry-ctl: dead entry " << escape_text(shown) << " is gone (replayed or purged meanwhile)\n";
      ++gone;
      return;
    }
    expect_ok(r, "FCALL expiry_replay_dead");
    const auto result = decode_schedule(r);
    if (!result) throw ReplyError("FCALL expiry_replay_dead: unexpected reply " + r.describe());
    ++replayed;
    std::cout << "replayed " << escape_text(shown) << " task=" << escape_text(*task) << " due_ms=" << result->due_ms
              << (result->replaced ? " (replaced the pending task)" : "") << "\n";
  };
  if (!options.entries.empty()) {
    const std::vector<DeadRef> refs = parse_refs(streams, options.entries);
    const auto found = read_entries(session.redis, streams, refs);
    for (size_t i = 0; i < refs.size(); ++i) {
      if (!found[i]) {
        std::cerr << "expiry-ctl: no dead entry " << escape_text(options.entries[i]) << " (already gone)\n";
        ++gone;
        continue;
      }
      replay(*found[i], options.entries[i]);
    }
  } else {
    for (size_t s = 0; s < streams.size(); ++s) {
      const auto last = last_entry_id(session.redis, streams[s]);
      if (!last) continue;
      for_each_batch(session.redis, streams, s, *last, [&](const std::vector<DeadEntry>& batch) {
        for (const DeadEntry& e : batch) replay(e, format_dead_ref(streams, e.ref));
      });
    }
  }
  std::cout << "replayed " << replayed << (gone ? ", " + std::to_string(gone) + " already gone" : "") << "\n";
  return gone > 0 && !options.all ? kExitNotPending : kExitOk;
}

}  // namespace expiry
