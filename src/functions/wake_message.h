// The message expiry_v1 publishes on NS:{B}:wake (src/lua/expiry/, docs/protocol.md):
// "<due_ms>", or "<due_ms>@<db>" when the scheduling client named its database. Pub/sub
// spans every database, so a relay uses the database to ignore wakes of another one. "recur":
// a recurring schedule of the bucket needs more occurrences computed (occurrences.lua). Pure.
#pragma once

#include <optional>
#include <string_view>

namespace expiry {

// The largest database number a wake message may name (MAX_DB in src/lua/expiry/keys.lua).
constexpr int kMaxWakeDb = 1000000;

struct WakeMessage {
  long long due_ms = 0;  // 0 for a recur message
  bool recur = false;    // "recur": refill the bucket's recurring schedules (any database's)
  std::optional<int> db;  // nullopt: a message without "@<db>" (any database's)
};

// The due time and database of a wake message, or a recur message; nullopt for any other text ("", "x", "123@",
// "@3", "123@-1", a due time or database out of range).
std::optional<WakeMessage> parse_wake_message(std::string_view text);

// Whether a relay serving database `db` should act on `wake`: it names `db` or no database.
inline bool wake_is_for_db(const WakeMessage& wake, int db) { return !wake.db || *wake.db == db; }

}  // namespace expiry
