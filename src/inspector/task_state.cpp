// Inspector::task_state (task_state.h): where one task is, from its shadow hash, the newest
// entries of its bucket's default and dead streams, and its consumer groups.
#include <algorithm>

#include "base/errors.h"
#include "functions/stream_entry.h"
#include "inspector/entry_format.h"
#include "inspector/inspector.h"
#include "inspector/reply_reads.h"
#include "io/sync/routed_client.h"
#include "io/sync/stream_scan.h"
#include "producer/producer.h"
#include "producer/task_placement.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

using namespace inspector_reads;

struct WholeEntry {
  std::string id;
  EntryFields fields;

  std::optional<std::string> field(std::string_view name) const {
    for (const auto& [k, v] : fields) {
      if (k == name) return v;
    }
    return std::nullopt;
  }
};

std::optional<long long> integer_field(const WholeEntry& e, std::string_view name) {
  const auto v = e.field(name);
  return v ? to_integer(*v) : std::nullopt;
}

// The entry of task `id` among `entries` (ids and task ids only) read whole from `key`, or
// nullopt when there is none, or it was trimmed or deleted meanwhile.
std::optional<WholeEntry> whole_entry(RoutedClient& redis, int slot, const std::string& key,
                                      const std::vector<ScannedEntry>& entries, const std::string& id) {
  const auto mine = [&](const auto& e) { return e.field(entry_field::kId) == std::optional<std::string>(id); };
  const auto at = std::find_if(entries.begin(), entries.end(), mine);
  if (at == entries.end()) return std::nullopt;
  const Reply r = redis.command({"XRANGE", key, at->id, at->id}, slot);
  check(r, "XRANGE " + key);
  if (r.type != Reply::Type::Array) return std::nullopt;
  for (const Reply& e : r.elements) {
    if (e.type != Reply::Type::Array || e.elements.size() != 2) continue;
    WholeEntry found{e.elements[0].str, field_pairs(e.elements[1])};
    if (mine(found)) return found;
  }
  return std::nullopt;
}

// What each group of `groups_reply` (XINFO GROUPS of `stream`) did with entry `entry_id`: read
// and acknowledged, read and still pending (XPENDING holds it), or not read yet (the entry is past
// the group's last-delivered-id). nullopt when XINFO was refused.
std::optional<std::vector<GroupDelivery>> deliveries_of(RoutedClient& redis, int slot, const std::string& stream,
                                                        const Reply& groups_reply, const std::string& entry_id) {
  const Reply* info = optional_reply(groups_reply);
  if (info == nullptr) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> groups;  // name, last-delivered-id
  for (const Reply& row : info->elements) {
    const Reply* name = info_value(row, "name");
    const Reply* last = info_value(row, "last-delivered-id");
    if (name != nullptr && groups.size() < kMaxNamesListed) groups.emplace_back(name->str, last ? last->str : "0-0");
  }
  std::vector<ClusterClient::Routed> reads;
  for (const auto& g : groups) reads.push_back({slot, {"XPENDING", stream, g.first, entry_id, entry_id, "1"}});
  const std::vector<Reply> pending = reads.empty() ? std::vector<Reply>() : redis.batch(reads);
  std::vector<GroupDelivery> out;
  for (size_t i = 0; i < groups.size(); ++i) {
    GroupDelivery g{groups[i].first, GroupDelivery::State::Acknowledged, "", std::nullopt};
    const Reply* p = optional_reply(pending[i]);
    if (p == nullptr) {
      g.state = GroupDelivery::State::Unknown;
    } else if (!p->elements.empty() && p->elements[0].elements.size() >= 4) {
      g.state = GroupDelivery::State::Delivered;
      g.consumer = p->elements[0].elements[1].str;
      g.deliveries = integer_of(p->elements[0].elements[3]);
    } else if (entry_id_before(groups[i].second, entry_id)) {
      g.state = GroupDelivery::State::Unread;
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

TaskState Inspector::task_state(const std::string& id) {
  TaskState out;
  out.id = id;
  out.task = producer_.show(id);
  if (out.task.pending) {
    out.state = TaskState::State::Pending;
    return out;
  }
  const TaskPlacement& layout = producer_.placement();
  const int bucket = layout.bucket_of_task(id);
  out.stream = layout.default_stream_of_bucket(bucket);
  const int stream_slot = slot_of_stream(layout, layout.bucket_streams() ? static_cast<size_t>(bucket) : 0);
  size_t d = 0;
  for (size_t i = 0; i < dead_.size(); ++i) {
    if (dead_[i].bucket == bucket) d = i;
  }
  const DeadStream& dead = dead_[d];
  out.dead_stream = dead.key;
  const Reply groups_reply = redis_.command({"XINFO", "GROUPS", out.stream}, stream_slot);
  if (groups_reply.is_io_error()) throw IoError(groups_reply.str);
  // The newest entries' ids and task ids only; then the one found, whole.
  const auto scanned = scan_streams(redis_,
                                    {{stream_slot, out.stream, true, "-", "+", kStateScanEntries},
                                     {dead.slot, dead.key, true, "-", "+", kStateScanEntries}},
                                    {2 * kStateScanBytes, kScanPageBytes, {entry_field::kId}});
  if (scanned[0].error) check(*scanned[0].error, "XREVRANGE " + out.stream);
  if (scanned[1].error) check(*scanned[1].error, "XREVRANGE " + dead.key);
  out.scanned_stream = scanned[0].entries.size();
  out.scanned_dead = scanned[1].entries.size();

  const auto forwarded = whole_entry(redis_, stream_slot, out.stream, scanned[0].entries, id);
  const auto died = whole_entry(redis_, dead.slot, dead.key, scanned[1].entries, id);
  if (forwarded) {
    out.fired = FiredEntry{out.stream,
                           forwarded->id,
                           integer_field(*forwarded, entry_field::kDueMs),
                           integer_field(*forwarded, entry_field::kFiredMs),
                           forwarded->fields,
                           deliveries_of(redis_, stream_slot, out.stream, groups_reply, forwarded->id)};
    out.state = TaskState::State::Fired;
  }
  if (died) {
    out.dead = DeadEntry{{d, died->id},
                         dead.key,
                         died->id,
                         entry_id_ms(died->id),
                         died->field(entry_field::kReason),
                         integer_field(*died, entry_field::kDeliveries),
                         died->fields};
    out.state = TaskState::State::Dead;
  }
  return out;
}

}  // namespace expiry
