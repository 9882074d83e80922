// See group_commands.h.
#include "consumer/group_commands.h"

#include <spdlog/spdlog.h>

namespace expiry {

const char* group_start_id(bool had_group) { return had_group ? "$" : "0"; }

std::vector<std::string> group_create_command(const GroupStream& s, const std::string& start_id) {
  return {"XGROUP", "CREATE", s.stream, s.group, start_id, "MKSTREAM"};
}

std::string group_recreated_message(const GroupStream& s, const std::string& last_read_id) {
  const std::string resume = last_read_id.empty() ? "0" : last_read_id;
  return "consumer group " + s.group + " on " + s.stream +
         " was destroyed; created it again at $: entries already in the stream are NOT handled again (none "
         "twice, no poison entry dead-lettered twice). Skipped too: entries added after this consumer's last "
         "read (" +
         resume +
         ") before the group was created again, and entries left unacknowledged. To replay from there: XGROUP "
         "SETID " +
         s.stream + " " + s.group + " " + resume + " (XGROUP SETID " + s.stream + " " + s.group +
         " 0 replays the whole stream, handled entries included)";
}

std::vector<std::string> read_command(const GroupStream& s, int count,
                                      std::optional<std::chrono::milliseconds> block) {
  std::vector<std::string> argv = {"XREADGROUP", "GROUP", s.group, s.consumer, "COUNT", std::to_string(count)};
  if (block) {
    argv.push_back("BLOCK");
    argv.push_back(std::to_string(block->count()));
  }
  argv.push_back("STREAMS");
  argv.push_back(s.stream);
  argv.push_back(">");
  return argv;
}

std::vector<StreamEntry> entries_of_read(const Reply& reply) {
  std::vector<StreamEntry> entries;
  if (reply.type != Reply::Type::Array) return entries;
  for (const auto& stream : reply.elements) {
    if (stream.type == Reply::Type::Array && stream.elements.size() == 2) {
      auto part = parse_stream_entries(stream.elements[1]);
      entries.insert(entries.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
  }
  return entries;
}

std::vector<std::string> ack_command(const GroupStream& s, const std::string& entry_id) {
  return {"XACK", s.stream, s.group, entry_id};
}

std::vector<std::string> pending_command(const GroupStream& s, std::chrono::milliseconds min_idle, int count) {
  return {"XPENDING", s.stream, s.group, "IDLE", std::to_string(min_idle.count()), "-", "+", std::to_string(count)};
}

ReclaimPlan plan_reclaim(const Reply& pending, int max_deliveries) {
  ReclaimPlan plan;
  if (pending.type != Reply::Type::Array) return plan;
  for (const auto& p : pending.elements) {
    if (p.type != Reply::Type::Array || p.elements.size() != 4) continue;
    const std::string& id = p.elements[0].str;
    const auto count = static_cast<uint64_t>(p.elements[3].integer);
    if (count >= static_cast<uint64_t>(max_deliveries)) {
      plan.dead.emplace_back(id, count);
    } else {
      plan.claim.push_back(id);
      plan.deliveries[id] = count + 1;  // XCLAIM counts this delivery
    }
  }
  return plan;
}

std::vector<std::string> claim_command(const GroupStream& s, std::chrono::milliseconds min_idle,
                                       const std::vector<std::string>& ids) {
  std::vector<std::string> argv = {"XCLAIM", s.stream, s.group, s.consumer, std::to_string(min_idle.count())};
  argv.insert(argv.end(), ids.begin(), ids.end());
  return argv;
}

std::vector<std::string> uncount_delivery_command(const GroupStream& s, const std::string& entry_id,
                                                  uint64_t deliveries) {
  return {"XCLAIM",     s.stream, s.group, s.consumer, "0", entry_id, "RETRYCOUNT",
          std::to_string(deliveries > 0 ? deliveries - 1 : 0), "JUSTID"};
}

std::vector<StreamEntry> claimed_entries(const Reply& reply, const ReclaimPlan& plan) {
  auto entries = parse_stream_entries(reply);
  for (auto& e : entries) {
    auto it = plan.deliveries.find(e.entry_id);
    if (it != plan.deliveries.end()) e.deliveries = it->second;
  }
  return entries;
}

std::vector<std::string> dead_letter_command(const GroupStream& s, const std::string& entry_id, uint64_t deliveries,
                                             const std::string& reason) {
  return {"FCALL",
          "expiry_dead_letter",
          "2",
          s.stream,
          s.dead_stream,
          s.group,
          entry_id,
          reason.empty() ? "failed " + std::to_string(deliveries) + " deliveries" : reason,
          std::to_string(deliveries)};
}

std::vector<std::string> retry_command(const GroupStream& s, const KeyLayout& task, const std::string& task_id,
                                       const std::string& entry_id, std::chrono::milliseconds delay,
                                       int max_attempts, const std::string& reason, int db) {
  return {"FCALL",
          "expiry_retry",
          "5",
          s.stream,
          s.dead_stream,
          task.schedule_key(),
          task.trigger_key(task_id),
          task.shadow_key(task_id),
          s.group,
          entry_id,
          task_id,
          std::to_string(delay.count()),
          std::to_string(max_attempts),
          reason,
          std::to_string(db)};
}

RetryResult retry_result(const Reply& reply) {
  if (reply.failed() || reply.type != Reply::Type::Array || reply.elements.empty() ||
      reply.elements[0].type != Reply::Type::Integer) {
    return RetryResult::Error;
  }
  switch (reply.elements[0].integer) {
    case 0: return RetryResult::NotPending;
    case 1: return RetryResult::Scheduled;
    case 2: return RetryResult::DeadLettered;
    case 3: return RetryResult::AckedOnly;
    default: return RetryResult::Error;
  }
}

void log_retry(RetryResult result, const std::string& stream, const std::string& entry_id, const std::string& task_id,
               long long attempt, std::chrono::milliseconds delay, const std::string& reason, const Reply& reply) {
  switch (result) {
    case RetryResult::Scheduled:
      spdlog::warn("task {} (entry {} of {}) failed attempt {} ({}); retrying in {} ms", task_id, entry_id, stream,
                   attempt, reason, delay.count());
      break;
    case RetryResult::DeadLettered:
      spdlog::warn("task {} (entry {} of {}) failed attempt {} ({}), its last: dead-lettered", task_id, entry_id,
                   stream, attempt, reason);
      break;
    case RetryResult::AckedOnly:
      spdlog::warn("task {} (entry {} of {}) failed attempt {} ({}); it was scheduled again meanwhile, kept as is",
                   task_id, entry_id, stream, attempt, reason);
      break;
    case RetryResult::NotPending:
      spdlog::info("entry {} of {} was settled elsewhere before its retry", entry_id, stream);
      break;
    case RetryResult::Error:
      spdlog::error("expiry_retry for task {} (entry {} of {}) failed: {}; the entry stays pending", task_id,
                    entry_id, stream, reply.describe());
      break;
  }
}

}  // namespace expiry
