// The Redis key layout of one namespace, and the pure parsing of keyspace events.
// Layout (docs/protocol.md): NS:{B}:schedule, NS:{B}:t:<id>, NS:{B}:task:<id>, NS:{B}:wake,
// and with more than one bucket the bucket's streams NS:{B}:stream and NS:{B}:dead, where B is
// the hash-tagged bucket (redis/hash_slot.h); NS:buckets holds the bucket count.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace expiry {

constexpr size_t kMaxIdBytes = 256;           // also enforced by the Lua library
constexpr size_t kMaxPayloadBytes = 65536;    // also enforced by the Lua library
constexpr size_t kMaxNamespaceBytes = 64;

// Returns an error message if `ns` is not 1..64 characters of [A-Za-z0-9_.-].
std::optional<std::string> namespace_error(std::string_view ns);

// Returns an error message if `id` is not a valid task id: 1..256 bytes of valid UTF-8
// without control characters or the other code points of is_forbidden_in_id (so ids are safe
// in keys, JSON, logs and channel messages). The Lua library applies the same rule.
std::optional<std::string> task_id_error(std::string_view id);

// Code points no id may hold: C0 and C1 controls, DEL, the line and paragraph separators
// U+2028/U+2029, the byte order mark U+FEFF, and the bidirectional controls U+061C, U+200E/U+200F,
// U+202A-U+202E, U+2066-U+2069 (each can break or disguise a log line).
bool is_forbidden_in_id(char32_t cp);

// True if `key` lies in namespace ns's bucket key space "NS:{<digits>}:...", which belongs to
// the library: a stream there could be deleted by a schedule of the task whose key it shadows.
// The bucket's own streams "NS:{<digits>}:stream" and "NS:{<digits>}:dead" are not in it.
bool in_task_key_space(std::string_view key, std::string_view ns);
// An error message if `stream` cannot be a stream name for namespace `ns` (empty, or inside
// its task key space).
std::optional<std::string> stream_name_error(std::string_view stream, std::string_view ns);

// The two per-task keys: NS:{B}:t:<id> (trigger) and NS:{B}:task:<id> (shadow hash).
enum class TaskKeyKind { Trigger, Shadow };

struct TaskKeyRef {
  int bucket = 0;
  TaskKeyKind kind = TaskKeyKind::Trigger;
  std::string_view id;  // points into the parsed key
};

class KeyLayout {
 public:
  explicit KeyLayout(std::string ns, int bucket = 0);

  const std::string& ns() const { return ns_; }
  int bucket() const { return bucket_; }
  const std::string& schedule_key() const { return schedule_key_; }
  std::string trigger_key(std::string_view id) const { return prefix_ + "t:" + std::string(id); }
  std::string shadow_key(std::string_view id) const { return prefix_ + "task:" + std::string(id); }
  // A recurring schedule's definition (src/lua/expiry/occurrences.lua); its occurrence is task `id`.
  std::string recur_key(std::string_view id) const { return prefix_ + "recur:" + std::string(id); }
  // Its next instants: a ZSET of "<utc_ms>|<local ISO-8601>" scored by utc_ms.
  std::string recur_next_key(std::string_view id) const { return prefix_ + "recur_next:" + std::string(id); }
  std::string wake_channel() const { return prefix_ + "wake"; }
  // The consumers' doorbell NS:{B}:ring (src/lua/expiry/doorbell.lua): a claim that appended to
  // the bucket stream publishes there, on a cluster.
  std::string ring_channel() const { return prefix_ + "ring"; }
  std::string health_channel(std::string_view instance) const {
    return ns_ + ":health:" + std::string(instance);
  }
  std::string default_stream() const { return ns_ + ":stream"; }
  // The streams of this bucket, used when the namespace has more than one bucket or lives on a
  // cluster (a stream must share its tasks' slot there).
  std::string bucket_stream() const { return prefix_ + "stream"; }
  std::string bucket_dead_stream() const { return prefix_ + "dead"; }
  // The key holding the namespace's bucket count (absent: one bucket).
  std::string buckets_key() const { return ns_ + ":buckets"; }
  // PSUBSCRIBE pattern of every bucket's wake channel, and the bucket of one such channel.
  std::string wake_pattern() const { return ns_ + ":{*}:wake"; }
  std::optional<int> bucket_from_wake_channel(std::string_view channel) const;

  // The task id of a trigger key of this namespace (any bucket), or nullopt for other keys.
  std::optional<std::string_view> id_from_trigger_key(std::string_view key) const;
  // The bucket, kind and id of a trigger key or shadow hash of this namespace (any bucket), or
  // nullopt for other keys (the schedule, other namespaces, malformed buckets, empty ids).
  std::optional<TaskKeyRef> parse_task_key(std::string_view key) const;
  // A SCAN MATCH pattern that covers the trigger keys and shadow hashes of every bucket
  // ("NS:{*}:t*"; it matches more, so filter with parse_task_key).
  std::string task_keys_pattern() const { return ns_ + ":{*}:t*"; }

 private:
  std::string ns_;
  std::string prefix_;  // "NS:{B}:"
  std::string schedule_key_;
  int bucket_ = 0;
};

// The database number of a "__keyevent@<db>__:expired" channel, or nullopt if the channel is
// not an expired keyevent channel (grammar from Redis src/notify.c).
std::optional<int> db_from_expired_channel(std::string_view channel);

}  // namespace expiry
