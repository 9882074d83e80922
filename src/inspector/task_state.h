// Where one task is (Inspector::task_state, GET /v1/tasks/{id}/state): pending, fired (its entry
// in its bucket's default stream, and what each consumer group did with it), dead (its dead
// letter), or unknown. The streams are searched among their newest entries only.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inspector/dead_letter_refs.h"
#include "producer/task_reads.h"

namespace expiry {

// Stream entries searched at most per stream, and the bytes at most across both streams.
constexpr long long kStateScanEntries = 1000;
constexpr size_t kStateScanBytes = 2u << 20;

using EntryFields = std::vector<std::pair<std::string, std::string>>;  // in stream order

// What one consumer group did with a fired task's entry.
struct GroupDelivery {
  enum class State {
    Unknown,       // XPENDING refused
    Acknowledged,  // read and acknowledged
    Delivered,     // read, still pending (XPENDING holds it)
    Unread,        // past the group's last-delivered-id
  };
  std::string group;
  State state = State::Unknown;
  std::string consumer;                // Delivered: who holds it
  std::optional<long long> deliveries;  // Delivered
};

struct FiredEntry {
  std::string stream;
  std::string entry_id;
  std::optional<long long> due_ms;
  std::optional<long long> fired_ms;
  EntryFields fields;
  std::optional<std::vector<GroupDelivery>> groups;  // the first kMaxNamesListed; nullopt: XINFO refused
};

struct DeadEntry {
  DeadRef ref;  // format_dead_ref names it
  std::string stream;
  std::string entry_id;
  std::optional<long long> when_ms;  // the entry id's time
  std::optional<std::string> reason;
  std::optional<long long> deliveries;
  EntryFields fields;
};

struct TaskState {
  enum class State { Unknown, Pending, Fired, Dead };
  std::string id;
  State state = State::Unknown;
  TaskDetails task;  // Pending: as Producer::show reads it
  // Not pending: the streams searched and the entries read from each.
  std::string stream;
  std::string dead_stream;
  size_t scanned_stream = 0;
  size_t scanned_dead = 0;
  std::optional<FiredEntry> fired;  // found in the default stream (the newest)
  std::optional<DeadEntry> dead;    // found in the dead stream (the newest); state is then Dead
};

}  // namespace expiry
