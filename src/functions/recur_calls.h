// The recurring schedules' calls of the function library (src/lua/expiry/recur.lua,
// docs/protocol.md "Recurring schedules"): their FCALL argument lists and reply decoding.
// Occurrence instants are computed by the caller (src/recur/) and sent as "<utc_ms>|<local>".
// Pure, no I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "functions/key_layout.h"
#include "redis/reply.h"

namespace expiry {

// One occurrence: its UTC time and its local time as ISO-8601 with the zone's offset.
struct RecurInstant {
  long long utc_ms = 0;
  std::string local_iso;
};

// What expiry_v2_recur_set stores. `rule` and `tz` are opaque to the library (the relays read
// them back to compute more instants): rule is "cron <expr>" or "every <period_ms> from <anchor_ms>".
struct RecurDefinition {
  std::string rule;
  std::string tz = "UTC";
  std::optional<long long> start_ms;
  std::optional<long long> end_ms;
  std::string payload;
  std::string stream;   // empty: the relay's default stream
  std::string webhook;  // empty: none
  std::optional<long long> max_late_ms;
  std::string misfire = "once";  // skip | once | all
  long long grace_ms = 1000;
  long long misfire_max = 100;   // all: catch-ups fired in a row at most
};

std::vector<std::string> recur_set_argv(const KeyLayout& keys, std::string_view id, const RecurDefinition& def,
                                        const std::vector<RecurInstant>& instants, std::optional<int> db = std::nullopt);
std::vector<std::string> recur_get_argv(const KeyLayout& keys, std::string_view id);
std::vector<std::string> recur_list_argv(const KeyLayout& keys, std::string_view cursor, int count);
std::vector<std::string> recur_delete_argv(const KeyLayout& keys, std::string_view id);
std::vector<std::string> recur_pause_argv(const KeyLayout& keys, std::string_view id);
std::vector<std::string> recur_resume_argv(const KeyLayout& keys, std::string_view id,
                                           const std::vector<RecurInstant>& instants,
                                           std::optional<int> db = std::nullopt);
std::vector<std::string> recur_refills_argv(const KeyLayout& keys, int limit);
std::vector<std::string> recur_refill_argv(const KeyLayout& keys, std::string_view id, std::string_view version,
                                           const std::vector<RecurInstant>& instants,
                                           std::optional<int> db = std::nullopt);

struct RecurSetResult {
  long long version = 0;
  long long armed_ms = -1;  // -1: no occurrence armed (paused, or no instant)
  long long upcoming = 0;   // instants stored after the armed one
  bool replaced = false;
};
// expiry_v2_resume: {exists, changed, armed_ms}; expiry_v2_pause: {exists, changed} (armed_ms -1).
struct RecurStateResult {
  bool exists = false;
  bool changed = false;
  long long armed_ms = -1;
};
struct RecurListPage {
  std::string cursor;  // "0": done
  std::vector<std::string> ids;
};
// A schedule waiting for instants (expiry_v2_recur_refills).
struct RecurRefillRow {
  std::string id;
  std::string version;
  std::string rule;
  std::string tz;
  std::optional<long long> start_ms;
  std::optional<long long> end_ms;
  std::optional<long long> horizon_ms;  // the last instant listed so far
  std::string misfire;
  long long grace_ms = 1000;
  long long misfire_max = 100;
  long long upcoming = 0;
  bool armed = false;
  std::optional<long long> last_ms;     // the last occurrence fired or skipped
};
struct RecurRefills {
  long long now_ms = 0;  // Redis clock
  std::vector<RecurRefillRow> rows;
};
struct RecurRefillResult {
  bool refilled = false;  // false: no such schedule, paused, or another version
  long long armed_ms = -1;
  long long upcoming = 0;
};

// Decoders return nullopt for any other reply shape (errors included).
std::optional<RecurSetResult> decode_recur_set(const Reply& reply);
// The definition's stored fields plus armed_ms and armed_local; an empty map when there is none.
std::optional<std::map<std::string, std::string>> decode_recur_get(const Reply& reply);
std::optional<RecurListPage> decode_recur_list(const Reply& reply);
std::optional<RecurStateResult> decode_recur_state(const Reply& reply);
std::optional<RecurRefills> decode_recur_refills(const Reply& reply);
std::optional<RecurRefillResult> decode_recur_refill(const Reply& reply);

}  // namespace expiry
