// What the Producer reads back: one task as it is stored (show), and the pending tasks in due
// order, a bounded page at a time, merged across the buckets (list). Installed API.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace expiry {

// The largest page Producer::list reads.
constexpr long long kMaxListCount = 10000;

// One task as Producer::show reads it, all on the task's node in one round trip.
struct TaskDetails {
  bool pending = false;   // false: not scheduled (fired, cancelled or never scheduled); nothing else is set
  long long due_ms = 0;
  long long now_ms = 0;   // the Redis clock of the task's node when it was read
  // The shadow hash as stored, in its order: payload, due_ms, created_ms, and stream,
  // max_late_ms, traceparent, first_ms, promoted_* or attempt where they apply.
  std::vector<std::pair<std::string, std::string>> fields;
  std::string stream;          // where it is forwarded: its own stream, else its bucket's default one
  bool default_stream = true;  // it has no stream of its own
  long long trigger_pttl_ms = -2;  // PTTL of its trigger key: -2 missing, -1 without an expiry

  // The value of field `name`, or nullopt.
  std::optional<std::string> field(std::string_view name) const {
    for (const auto& [key, value] : fields) {
      if (key == name) return value;
    }
    return std::nullopt;
  }
};

struct ListQuery {
  long long count = 100;                  // tasks per page, 1..kMaxListCount
  std::string cursor;                     // TaskPage::next_cursor of the page before; empty: from the start
  std::optional<long long> due_before_ms; // only tasks due before this (epoch ms)
};

struct ListedTask {
  std::string id;
  std::string score;               // its schedule score as Redis returned it
  std::optional<long long> due_ms; // the score in whole ms (nullopt for a member that is not a due time)
  int bucket = 0;
};

struct TaskPage {
  std::vector<ListedTask> tasks;           // in due order (score, then id bytes)
  std::optional<std::string> next_cursor;  // more follow: the cursor of the next page
};

// What Producer::list_details reads of a listed task (a task that fired meanwhile shows no
// payload and its bucket's default stream).
struct ListedTaskDetails {
  std::string stream;
  bool default_stream = true;
  long long payload_bytes = 0;
  std::string payload_head;  // the payload's first bytes, when asked for ("" when it has none)
};

}  // namespace expiry
