// The consumer-group commands of one stream and the decoding of their replies, shared by
// every NodeConsumer (one stream on a single Redis, one per bucket on a cluster node).
// Pure: builds argv vectors and reads Reply values, sends nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "functions/key_layout.h"
#include "functions/stream_entry.h"
#include "redis/reply.h"

namespace expiry {

// The names a consumer uses on one stream.
struct GroupStream {
  std::string stream;
  std::string dead_stream;  // where expiry_dead_letter moves poison entries (same slot as stream on a cluster)
  std::string group;
  std::string consumer;
};

// The id a group is created at: "0" the first time (entries already in the stream are handled),
// "$" once this consumer had the group (it was destroyed: nothing handled is handled again).
const char* group_start_id(bool had_group);
// XGROUP CREATE <stream> <group> <start_id> MKSTREAM (BUSYGROUP: it exists, which is fine).
std::vector<std::string> group_create_command(const GroupStream& s, const std::string& start_id);
// The error logged when a group this consumer had was destroyed and created again at $, with the
// XGROUP SETID commands that replay what was skipped. `last_read_id`: empty before the first read.
std::string group_recreated_message(const GroupStream& s, const std::string& last_read_id);

// XREADGROUP ... COUNT <count> [BLOCK <ms>] STREAMS <stream> >; no BLOCK when `block` is nullopt.
std::vector<std::string> read_command(const GroupStream& s, int count,
                                      std::optional<std::chrono::milliseconds> block);
// The entries of an XREADGROUP reply (every stream's, in order); nil (timeout) gives none.
std::vector<StreamEntry> entries_of_read(const Reply& reply);

std::vector<std::string> ack_command(const GroupStream& s, const std::string& entry_id);

// XPENDING <stream> <group> IDLE <min_idle> - + <count>.
std::vector<std::string> pending_command(const GroupStream& s, std::chrono::milliseconds min_idle, int count);

// What to do with the entries an XPENDING (extended form) listed.
struct ReclaimPlan {
  std::vector<std::pair<std::string, uint64_t>> dead;  // entry id, deliveries so far: dead-letter
  std::vector<std::string> claim;                      // entry ids to claim, in XPENDING order
  std::map<std::string, uint64_t> deliveries;          // of each claimed entry, counting the claim
};
// Entries delivered max_deliveries times or more are dead-lettered; the others are claimed.
ReclaimPlan plan_reclaim(const Reply& pending, int max_deliveries);
// XCLAIM <stream> <group> <consumer> <min_idle> <ids...>.
std::vector<std::string> claim_command(const GroupStream& s, std::chrono::milliseconds min_idle,
                                       const std::vector<std::string>& ids);
// XCLAIM <stream> <group> <consumer> 0 <id> RETRYCOUNT <deliveries - 1> JUSTID: keeps an entry
// pending with this consumer, its idle time restarted and this delivery taken back from its
// count (JUSTID does not count one), so the reclaim path hands it out again after min_idle
// without ever reaching max_deliveries through refusals alone.
std::vector<std::string> uncount_delivery_command(const GroupStream& s, const std::string& entry_id,
                                                  uint64_t deliveries);
// The entries an XCLAIM returned, with their delivery counts from the plan.
std::vector<StreamEntry> claimed_entries(const Reply& reply, const ReclaimPlan& plan);

// FCALL expiry_dead_letter 2 <stream> <dead_stream> <group> <id> <reason> <deliveries>; the
// reason is "failed N deliveries" unless given (a handler's rejection).
std::vector<std::string> dead_letter_command(const GroupStream& s, const std::string& entry_id, uint64_t deliveries,
                                             const std::string& reason = "");

// FCALL expiry_retry 5 <stream> <dead_stream> <schedule> <trigger> <shadow> <group> <entry_id>
// <task_id> <delay_ms> <max_attempts> <reason> <db>: `task` is the layout of the task's bucket
// (on a cluster, the bucket of the stream the entry came from); `db` the selected database (0 on
// a cluster), named in the wake message of the task scheduled again.
std::vector<std::string> retry_command(const GroupStream& s, const KeyLayout& task, const std::string& task_id,
                                       const std::string& entry_id, std::chrono::milliseconds delay,
                                       int max_attempts, const std::string& reason, int db);

// What expiry_retry did with a failed delivery.
enum class RetryResult {
  Scheduled,     // acknowledged and scheduled again
  DeadLettered,  // acknowledged and moved to the dead stream (its last attempt)
  AckedOnly,     // acknowledged; the task was pending again already (a producer rescheduled it)
  NotPending,    // the entry was no longer pending: nothing written
  Error,         // the call failed or answered something else: nothing known, the entry stays pending
};
RetryResult retry_result(const Reply& reply);
// Logs what expiry_retry did with a failed delivery (`reply` for the Error case).
void log_retry(RetryResult result, const std::string& stream, const std::string& entry_id, const std::string& task_id,
               long long attempt, std::chrono::milliseconds delay, const std::string& reason, const Reply& reply);

}  // namespace expiry
