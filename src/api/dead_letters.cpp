// See dead_letters.h.
#include "api/dead_letters.h"

#include <optional>

#include "base/errors.h"
#include "base/text_escape.h"
#include "inspector/dead_letter_list.h"
#include "inspector/dead_letter_refs.h"
#include "inspector/entry_format.h"
#include "inspector/inspector.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

nlohmann::json nullable(const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

nlohmann::json list_dead_letters(Producer& producer, const std::string& dead_stream, long long limit) {
  Inspector inspector(producer, dead_stream);
  const auto& streams = inspector.dead_streams();
  const DeadLetterList listed = inspector.list_dead_letters(limit);
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
  Inspector inspector(producer, dead_stream);
  const std::vector<DeadRef> refs = inspector.parse_dead_refs(entries);
  const auto found = inspector.read_dead_letters(refs);
  nlohmann::json replayed = nlohmann::json::array();
  nlohmann::json gone = nlohmann::json::array();
  for (size_t i = 0; i < refs.size(); ++i) {
    if (!found[i]) {
      gone.push_back(entries[i]);
      continue;
    }
    const DeadReplay r = inspector.replay_dead_letter(*found[i], delay_ms);
    switch (r.outcome) {
      case DeadReplay::Outcome::NoTaskId:
        throw ReplyError("dead entry " + escape_text(entries[i]) + " holds no valid task id; it was left in place");
      case DeadReplay::Outcome::OutsideTaskSlot:
        throw ReplyError("dead entry " + escape_text(entries[i]) +
                         " is not in the slot of its task's bucket: it cannot "
                         "be replayed atomically");
      case DeadReplay::Outcome::Gone:
        gone.push_back(entries[i]);
        break;
      case DeadReplay::Outcome::Replayed:
        replayed.push_back({{"entry", entries[i]}, {"task_id", r.task_id}, {"due_ms", r.due_ms}, {"replaced", r.replaced}});
        break;
    }
  }
  return {{"replayed", replayed}, {"gone", gone}};
}

nlohmann::json purge_dead_letters(Producer& producer, const std::string& dead_stream,
                                  const std::vector<std::string>& entries) {
  Inspector inspector(producer, dead_stream);
  const std::vector<bool> deleted = inspector.purge_dead_letters(inspector.parse_dead_refs(entries));
  nlohmann::json purged = nlohmann::json::array();
  nlohmann::json gone = nlohmann::json::array();
  for (size_t i = 0; i < deleted.size(); ++i) (deleted[i] ? purged : gone).push_back(entries[i]);
  return {{"purged", purged}, {"gone", gone}};
}

}  // namespace expiry
