// GET /v1/dead and POST /v1/dead/replay: the dead-letter streams as `expiry-ctl dead list
// --json` and `expiry-ctl dead replay ENTRY...` read and replay them (inspector/dead_letter_refs.h
// names the streams and entries), on a worker's Producer connection.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace expiry {

class Producer;

// The oldest `limit` dead letters across the dead streams: {"entries": [...], "count", "more"},
// each entry as `expiry-ctl dead list --json` prints it. `dead_stream`: the single-bucket dead
// stream (empty: <stream>:dead).
nlohmann::json list_dead_letters(Producer& producer, const std::string& dead_stream, long long limit);

// Replays the named entries, one FCALL expiry_replay_dead each (the task scheduled again
// `delay_ms` from now and the entry deleted, atomically): {"replayed": [{"entry", "task_id",
// "due_ms", "replaced"}], "gone": [entries already replayed or purged]}. Throws ConfigError for
// an entry name that does not parse (nothing is replayed then), ReplyError for an entry without
// a valid task id.
nlohmann::json replay_dead_letters(Producer& producer, const std::string& dead_stream,
                                   const std::vector<std::string>& entries, long long delay_ms);

// Deletes the named entries (XDEL; as `expiry-ctl dead purge ENTRY...`): {"purged": [entries],
// "gone": [entries already replayed or purged]}. Throws ConfigError for an entry name that does
// not parse (nothing is deleted then).
nlohmann::json purge_dead_letters(Producer& producer, const std::string& dead_stream,
                                  const std::vector<std::string>& entries);

}  // namespace expiry
