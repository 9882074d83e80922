// expiry_schedule_many (src/lua/expiry/schedule.lua, docs/protocol.md): many tasks of one bucket
// scheduled in one FCALL, its argument list and its reply. Pure, no I/O.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "redis/reply.h"

namespace expiry {

// The library's limits on one call (MAX_SCHEDULE_BATCH, MAX_SCHEDULE_BATCH_BYTES in
// src/lua/expiry/schedule.lua).
constexpr size_t kMaxScheduleBatchTasks = 250;
constexpr size_t kMaxScheduleBatchPayloadBytes = 4 * 1024 * 1024;

struct ScheduleBatchTask {
  std::string_view id;
  ScheduleMode mode = ScheduleMode::Delay;
  long long ms = 0;
  std::string_view payload;
  std::string_view stream;  // empty: the relay's default stream
  std::string_view options = {};  // task_options_argument's (functions/task_options.h); empty: none
};

// FCALL expiry_schedule_many for `tasks`, all of which must belong to the bucket of `keys`
// (at most kMaxScheduleBatchTasks; an empty list makes the call that only checks the layout,
// which a client can use to learn whether it may call the function). `db` as for schedule_argv.
// When a task has options, the call takes the form with options per task ("opts" first).
std::vector<std::string> schedule_many_argv(const KeyLayout& keys, const std::vector<ScheduleBatchTask>& tasks,
                                            std::optional<int> db = std::nullopt);

// The per-task results of a reply to a call of `tasks` tasks, in order; nullopt for errors and
// replies of another shape.
std::optional<std::vector<ScheduleResult>> decode_schedule_many(const Reply& reply, size_t tasks);

// The 0-based index of the task an error reply of expiry_schedule_many names ("task #<i>",
// 1-based in the message), or nullopt when it names none (the whole call was refused).
std::optional<size_t> schedule_many_failed_task(const Reply& reply);

}  // namespace expiry
