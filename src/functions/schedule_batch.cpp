// See schedule_batch.h.
#include "functions/schedule_batch.h"

#include <algorithm>

#include "base/integers.h"

namespace expiry {

std::vector<std::string> schedule_many_argv(const KeyLayout& keys, const std::vector<ScheduleBatchTask>& tasks,
                                            std::optional<int> db) {
  std::vector<std::string> argv;
  argv.reserve(5 + 7 * tasks.size());
  argv.insert(argv.end(), {"FCALL", "expiry_schedule_many", std::to_string(1 + 2 * tasks.size()), keys.schedule_key()});
  for (const auto& t : tasks) {
    argv.push_back(keys.trigger_key(t.id));
    argv.push_back(keys.shadow_key(t.id));
  }
  const bool with_options =
      std::any_of(tasks.begin(), tasks.end(), [](const ScheduleBatchTask& t) { return !t.options.empty(); });
  if (with_options) argv.emplace_back("opts");
  argv.push_back(std::to_string(tasks.size()));
  for (const auto& t : tasks) {
    argv.emplace_back(t.id);
    argv.emplace_back(t.mode == ScheduleMode::Delay ? "delay" : "at");
    argv.push_back(std::to_string(t.ms));
    argv.emplace_back(t.payload);
    argv.emplace_back(t.stream);
    if (with_options) argv.emplace_back(t.options);
  }
  if (db) argv.push_back(std::to_string(*db));
  return argv;
}

std::optional<std::vector<ScheduleResult>> decode_schedule_many(const Reply& reply, size_t tasks) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 2 * tasks) return std::nullopt;
  std::vector<ScheduleResult> out;
  out.reserve(tasks);
  for (size_t i = 0; i < tasks; ++i) {
    const Reply& due = reply.elements[2 * i];
    const Reply& replaced = reply.elements[2 * i + 1];
    if (due.type != Reply::Type::Integer || replaced.type != Reply::Type::Integer) return std::nullopt;
    out.push_back({due.integer, replaced.integer == 1, replaced.integer == 2});
  }
  return out;
}

std::optional<size_t> schedule_many_failed_task(const Reply& reply) {
  if (reply.type != Reply::Type::Error) return std::nullopt;
  for (std::string_view head : {"ERR expiry: task #", "ERR expiry: migrating: task #"}) {
    if (reply.str.compare(0, head.size(), head) != 0) continue;
    const size_t end = reply.str.find(' ', head.size());
    if (end == std::string::npos) return std::nullopt;
    const auto n = parse_int64(std::string_view(reply.str).substr(head.size(), end - head.size()));
    if (!n || *n < 1) return std::nullopt;
    return static_cast<size_t>(*n - 1);
  }
  return std::nullopt;
}

}  // namespace expiry
