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
#include "ctl/task_listing.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "inspector/dead_letter_list.h"
#include "inspector/dead_letter_refs.h"
#include "inspector/entry_format.h"
#include "inspector/inspector.h"
#include "producer/task.h"
#include "redis/redis_error.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

constexpr long long kBatch = 500;  // entries per XRANGE / XDEL of purge and replay --all

std::string json_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string text_or(const std::optional<std::string>& v, const char* absent) { return v ? *v : absent; }

// Calls `visit` with every entry of dead stream `s` up to `end` (an XRANGE end: "+", an id, or
// "(id"), kBatch at a time, each batch after the last one read.
template <typename Visit>
void for_each_batch(Inspector& inspector, size_t s, const std::string& end, Visit visit) {
  std::string start = "-";
  while (true) {
    const std::vector<DeadLetter> batch = inspector.dead_letter_range(s, start, end, kBatch);
    if (batch.empty()) return;
    visit(batch);
    if (static_cast<long long>(batch.size()) < kBatch) return;
    start = "(" + batch.back().ref.entry_id;
  }
}

}  // namespace

int run_dead_list(const CtlTarget& target, const DeadListOptions& options) {
  if (options.count < 1 || options.count > kMaxListCount) {
    throw ConfigError("--count must be between 1 and " + std::to_string(kMaxListCount));
  }
  CtlSession session(target);
  Inspector inspector(session.producer, options.dead_stream);
  const auto& streams = inspector.dead_streams();
  const DeadLetterList listed = inspector.list_dead_letters(options.count);
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
  Inspector inspector(session.producer, dead_stream);
  const auto& streams = inspector.dead_streams();
  const std::vector<DeadRef> refs = inspector.parse_dead_refs({entry});
  const auto found = inspector.read_dead_letters(refs);
  if (!found.front()) {
    std::cerr << "expiry-ctl: no dead entry " << escape_text(entry) << " in " << escape_text(streams[refs[0].stream].key)
              << " (replayed, purged or never there)\n";
    return kExitNotPending;
  }
  const DeadLetter& e = *found.front();
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
  Inspector inspector(session.producer, options.dead_stream);
  const auto& streams = inspector.dead_streams();
  if (!options.entries.empty()) {
    const std::vector<DeadRef> refs = inspector.parse_dead_refs(options.entries);
    const std::vector<bool> deleted = inspector.purge_dead_letters(refs);
    long long purged = 0;
    for (size_t i = 0; i < refs.size(); ++i) {
      if (deleted[i]) {
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
      const auto last = inspector.newest_dead_letter_id(s);
      if (!last) continue;
      end = *last;
    }
    if (end == "(0-0") continue;
    for_each_batch(inspector, s, end, [&](const std::vector<DeadLetter>& batch) {
      std::vector<DeadRef> refs;
      for (const DeadLetter& e : batch) refs.push_back(e.ref);
      for (const bool deleted : inspector.purge_dead_letters(refs)) purged += deleted ? 1 : 0;
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
  Inspector inspector(session.producer, options.dead_stream);
  const auto& streams = inspector.dead_streams();
  long long replayed = 0;
  long long gone = 0;
  // Replays one entry read before; counts it gone when it was by the time of the FCALL.
  auto replay = [&](const DeadLetter& e, const std::string& shown) {
    const DeadReplay r = inspector.replay_dead_letter(e, options.delay_ms);
    switch (r.outcome) {
      case DeadReplay::Outcome::NoTaskId:
        throw ReplyError("dead entry " + shown + " holds no valid task id; it was left in place");
      case DeadReplay::Outcome::OutsideTaskSlot:
        throw ConfigError("dead entry " + shown + " (task " + escape_text(r.task_id) + ") is in " +
                          streams[e.ref.stream].key + ", not in the slot of the task's bucket " +
                          std::to_string(r.task_bucket) +
                          ": it cannot be replayed atomically; schedule the task and purge the entry by hand");
      case DeadReplay::Outcome::Gone:
        std::cerr << "expiry-ctl: dead entry " << escape_text(shown) << " is gone (replayed or purged meanwhile)\n";
        ++gone;
        return;
      case DeadReplay::Outcome::Replayed:
        ++replayed;
        std::cout << "replayed " << escape_text(shown) << " task=" << escape_text(r.task_id) << " due_ms=" << r.due_ms
                  << (r.replaced ? " (replaced the pending task)" : "") << "\n";
        return;
    }
  };
  if (!options.entries.empty()) {
    const std::vector<DeadRef> refs = inspector.parse_dead_refs(options.entries);
    const auto found = inspector.read_dead_letters(refs);
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
      const auto last = inspector.newest_dead_letter_id(s);
      if (!last) continue;
      for_each_batch(inspector, s, *last, [&](const std::vector<DeadLetter>& batch) {
        for (const DeadLetter& e : batch) replay(e, format_dead_ref(streams, e.ref));
      });
    }
  }
  std::cout << "replayed " << replayed << (gone ? ", " + std::to_string(gone) + " already gone" : "") << "\n";
  return gone > 0 && !options.all ? kExitNotPending : kExitOk;
}

}  // namespace expiry
