// See dead_letters.h.
#include "api/dead_letters.h"

#include <algorithm>
#include <optional>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/dead_letters.h"
#include "ctl/entry_format.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "inspector/dead_letter_list.h"
#include "io/sync/routed_client.h"
#include "producer/producer.h"
#include "producer/task_placement.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

struct DeadEntry {
  DeadRef ref;
  std::vector<std::pair<std::string, std::string>> fields;

  std::optional<std::string> field(std::string_view name) const {
    for (const auto& [k, v] : fields) {
      if (k == name) return v;
    }
    return std::nullopt;
  }
};

void check(const Reply& r, const std::string& what) {
  if (r.is_io_error()) throw IoError(what + ": " + r.str);
  if (r.failed()) throw ReplyError(what + ": " + r.str);
}

std::vector<DeadEntry> entries_of(const Reply& reply, size_t stream, const std::string& what) {
  check(reply, what);
  std::vector<DeadEntry> out;
  if (reply.type != Reply::Type::Array) throw ReplyError(what + ": unexpected reply " + reply.describe());
  for (const Reply& e : reply.elements) {
    if (e.type != Reply::Type::Array || e.elements.size() != 2) throw ReplyError(what + ": unexpected entry");
    out.push_back({{stream, e.elements[0].str}, field_pairs(e.elements[1])});
  }
  return out;
}

nlohmann::json nullable(const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

nlohmann::json list_dead_letters(Producer& producer, const std::string& dead_stream, long long limit) {
  const auto streams = dead_streams(producer.placement(), dead_stream);
  const DeadLetterList listed = list_dead_letter_summaries(producer.client(), streams, limit);
  nlohmann::json entries = nlohmann::json::array();
  for (const DeadLetterSummary& e : listed.entries) {
    const auto when = entry_id_ms(e.ref.entry_id);
    nlohmann::json j = {{"entry", format_dead_ref(streams, e.ref)},
                        {"stream", streams[e.ref.stream].key},
                        {"entry_id", e.ref.entry_id},
                        {"when_ms", when ? nlohmann::json(*when) : nlohmann::json()},
                        {"task_id", nullable(e.task_id)},
                        {"reason", nullable(e.reason)},
                        {"deliveries", nullptr},
                        {"original_stream", nullable(e.original_stream)},
                        {"original_id", nullable(e.original_id)}};
    if (e.deliveries) {
      if (auto n = to_integer(*e.deliveries)) j["deliveries"] = *n;
    }
    entries.push_back(std::move(j));
  }
  return {{"entries", entries}, {"count", listed.entries.size()}, {"more", listed.more}};
}

nlohmann::json replay_dead_letters(Producer& producer, const std::string& dead_stream,
                                   const std::vector<std::string>& entries, long long delay_ms) {
  const TaskPlacement& layout = producer.placement();
  RoutedClient& redis = producer.client();
  const auto streams = dead_streams(layout, dead_stream);
  std::vector<DeadRef> refs;
  for (const std::string& text : entries) {
    std::string why;
    auto ref = parse_dead_ref(streams, text, &why);
    if (!ref) throw ConfigError("entry '" + escape_text(text) + "': " + why);
    refs.push_back(*ref);
  }
  nlohmann::json replayed = nlohmann::json::array();
  nlohmann::json gone = nlohmann::json::array();
  for (size_t i = 0; i < refs.size(); ++i) {
    const DeadStream& dead = streams[refs[i].stream];
    const Reply read = redis.command({"XRANGE", dead.key, refs[i].entry_id, refs[i].entry_id}, dead.slot);
    const auto found = entries_of(read, refs[i].stream, "XRANGE " + dead.key);
    if (found.empty()) {
      gone.push_back(entries[i]);
      continue;
    }
    const auto task = found.front().field("id");
    if (!task || task_id_error(*task)) {
      throw ReplyError("dead entry " + escape_text(entries[i]) + " holds no valid task id; it was left in place");
    }
    const KeyLayout keys = layout.keys_of_task(*task);
    const int slot = TaskPlacement::slot_of_bucket(keys.bucket());
    if (layout.cluster && slot != dead.slot) {
      throw ReplyError("dead entry " + escape_text(entries[i]) +
                       " is not in the slot of its task's bucket: it cannot "
                       "be replayed atomically");
    }
    const Reply r =
        redis.fcall({"FCALL", "expiry_replay_dead", "4", dead.key, keys.schedule_key(), keys.trigger_key(*task),
                     keys.shadow_key(*task), refs[i].entry_id, *task, std::to_string(delay_ms),
                     layout.default_stream_of_bucket(keys.bucket()), std::to_string(layout.db)},
                    slot);
    if (r.type == Reply::Type::Error && r.str.find("already replayed or purged") != std::string::npos) {
      gone.push_back(entries[i]);
      continue;
    }
    check(r, "FCALL expiry_replay_dead");
    const auto result = decode_schedule(r);
    if (!result) throw ReplyError("FCALL expiry_replay_dead: unexpected reply " + r.describe());
    replayed.push_back(
        {{"entry", entries[i]}, {"task_id", *task}, {"due_ms", result->due_ms}, {"replaced", result->replaced}});
  }
  return {{"replayed", replayed}, {"gone", gone}};
}

nlohmann::json purge_dead_letters(Producer& producer, const std::string& dead_stream,
                                  const std::vector<std::string>& entries) {
  const auto streams = dead_streams(producer.placement(), dead_stream);
  std::vector<ClusterClient::Routed> commands;
  for (const std::string& text : entries) {
    std::string why;
    const auto ref = parse_dead_ref(streams, text, &why);
    if (!ref) throw ConfigError("entry '" + escape_text(text) + "': " + why);
    commands.push_back({streams[ref->stream].slot, {"XDEL", streams[ref->stream].key, ref->entry_id}});
  }
  const std::vector<Reply> replies = producer.client().batch(commands);
  nlohmann::json purged = nlohmann::json::array();
  nlohmann::json gone = nlohmann::json::array();
  for (size_t i = 0; i < replies.size(); ++i) {
    check(replies[i], "XDEL");
    (replies[i].integer > 0 ? purged : gone).push_back(entries[i]);
  }
  return {{"purged", purged}, {"gone", gone}};
}

}  // namespace expiry
