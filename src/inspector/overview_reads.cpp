// Inspector::overview and Inspector::timeline (overview.h): the console's overview and its
// due-time bars, bounded reads on the Producer's connection.
#include <algorithm>
#include <map>
#include <set>

#include "base/errors.h"
#include "functions/key_layout.h"
#include "functions/stream_entry.h"
#include "inspector/dead_letter_refs.h"
#include "inspector/inspector.h"
#include "inspector/reply_reads.h"
#include "inspector/timeline_ranges.h"
#include "io/sync/routed_client.h"
#include "io/sync/stream_scan.h"
#include "producer/producer.h"
#include "producer/task_placement.h"
#include "redis/redis_error.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

using namespace inspector_reads;

// One consumer group across the streams it reads, while they are read.
struct GroupSummary {
  long long streams = 0;
  long long pending = 0;
  std::optional<long long> lag = 0;  // unknown as soon as one stream's is
  std::map<std::string, std::pair<long long, long long>> consumers;  // name: pending, smallest idle ms
};

// The activity sample of `ranges` (one per default stream) at `now`; nullopt when one failed.
std::optional<ActivitySample> activity_of(const std::vector<ScannedRange>& ranges, long long now) {
  ActivitySample out;
  std::vector<long long> lateness;
  for (const ScannedRange& range : ranges) {
    if (range.error) return std::nullopt;
    const auto& entries = range.entries;
    out.sampled += static_cast<long long>(entries.size());
    long long covered_ms = kActivityWindowMs;
    if (!range.complete) {
      out.capped = true;
      if (!entries.empty()) {
        covered_ms = std::max<long long>(1, now - entry_id_ms(entries.back().id).value_or(now - kActivityWindowMs));
      }
    }
    out.forwarded_per_second += static_cast<double>(entries.size()) * 1000.0 / static_cast<double>(covered_ms);
    for (const ScannedEntry& e : entries) {
      const auto due = e.field(entry_field::kDueMs);
      const auto fired = e.field(entry_field::kFiredMs);
      const auto created = e.field(entry_field::kCreatedMs);
      const auto due_ms = due ? to_integer(*due) : std::nullopt;
      const auto fired_ms = fired ? to_integer(*fired) : std::nullopt;
      if (!due_ms || !fired_ms) continue;
      const long long due_at = due_ms.value_or(0);
      const std::optional<long long> created_ms = created ? to_integer(*created) : std::nullopt;
      if (lateness_applies(created_ms, due_at)) lateness.push_back(std::max(0LL, fired_ms.value_or(0) - due_at));
    }
  }
  out.lateness_p50_ms = percentile(lateness, 50);
  out.lateness_p99_ms = percentile(lateness, 99);
  return out;
}

// The relays subscribed now to NS:health:<instance> on some primary; nullopt when PUBSUB is
// refused, or when there is no node list (a cluster between slot maps: unknown this time).
std::optional<RelayInfo> relays_of(RoutedClient& redis, const std::string& ns) {
  try {
    std::set<std::string> instances;
    const std::string prefix = ns + ":health:";
    for (const NodeAddress& node : redis.primaries()) {
      const Reply r = redis.command_on(node, {"PUBSUB", "CHANNELS", prefix + "*"});
      if (r.is_io_error()) throw IoError(r.str);
      if (r.failed()) return std::nullopt;
      for (const Reply& c : r.elements) instances.insert(c.str.substr(std::min(prefix.size(), c.str.size())));
    }
    RelayInfo out;
    out.count = instances.size();
    for (const std::string& n : instances) {
      if (out.instances.size() >= kMaxNamesListed) break;
      out.instances.push_back(n);
    }
    return out;
  } catch (const IoError&) {
    throw;
  } catch (const Error&) {  // no node list: unknown this time, ignored
    return std::nullopt;
  }
}

}  // namespace

Overview Inspector::overview() {
  const TaskPlacement& layout = producer_.placement();
  Overview out;
  out.stats = stats();
  const long long now = out.stats.now_ms;
  const std::vector<std::string> streams = layout.streams();
  const long long per_stream = std::max<long long>(20, kActivitySampleEntries / static_cast<long long>(streams.size()));
  const long long per_dead = std::max<long long>(10, kDeadReasonScan / static_cast<long long>(dead_.size()));

  std::vector<ClusterClient::Routed> commands;
  std::vector<StreamRange> recent;
  for (size_t s = 0; s < streams.size(); ++s) {
    const int slot = slot_of_stream(layout, s);
    commands.push_back({slot, {"XINFO", "GROUPS", streams[s]}});
    recent.push_back({slot, streams[s], true, std::to_string(now - kActivityWindowMs), "+", per_stream});
  }
  const size_t dead_at = commands.size();
  std::vector<StreamRange> newest_dead;
  for (const DeadStream& d : dead_) {
    commands.push_back({d.slot, {"XLEN", d.key}});
    newest_dead.push_back({d.slot, d.key, true, "-", "+", per_dead});
  }
  const std::vector<Reply> replies = redis_.batch(commands);
  const auto sampled_ranges = scan_streams(
      redis_, recent,
      {kActivityScanBytes, kScanPageBytes, {entry_field::kDueMs, entry_field::kFiredMs, entry_field::kCreatedMs}});
  const auto dead_ranges = scan_streams(redis_, newest_dead, {kDeadReasonScanBytes, kScanPageBytes, {entry_field::kReason}});

  // The groups of each stream (XINFO GROUPS of a stream not yet written is an error: no groups
  // there; NOPERM: unknown), then the consumers of each, merged across the streams by name.
  std::map<std::string, GroupSummary> groups;
  bool groups_known = true;
  std::vector<std::pair<size_t, std::string>> group_reads;  // stream index, group
  for (size_t s = 0; s < streams.size(); ++s) {
    const Reply& info = replies[s];
    if (info.is_io_error()) throw IoError(info.str);
    if (info.failed()) {
      if (classify(info) == RedisErrorKind::NoPermission) groups_known = false;
      continue;
    }
    for (const Reply& row : info.elements) {
      const Reply* name = info_value(row, "name");
      if (name == nullptr) continue;
      GroupSummary& g = groups[name->str];
      ++g.streams;
      g.pending += info_integer(row, "pending").value_or(0);
      const auto lag = info_integer(row, "lag");
      g.lag = g.lag && lag ? std::optional<long long>(*g.lag + *lag) : std::nullopt;
      if (group_reads.size() < kMaxGroupReads) group_reads.emplace_back(s, name->str);
    }
  }
  out.activity = activity_of(sampled_ranges, now);
  if (!group_reads.empty()) {
    std::vector<ClusterClient::Routed> reads;
    for (const auto& [s, group] : group_reads) {
      reads.push_back({slot_of_stream(layout, s), {"XINFO", "CONSUMERS", streams[s], group}});
    }
    const std::vector<Reply> answers = redis_.batch(reads);
    for (size_t i = 0; i < answers.size(); ++i) {
      const Reply* a = optional_reply(answers[i]);
      if (a == nullptr) continue;
      GroupSummary& g = groups[group_reads[i].second];
      for (const Reply& row : a->elements) {
        const Reply* name = info_value(row, "name");
        if (name == nullptr) continue;
        auto [it, added] = g.consumers.try_emplace(name->str, 0, info_integer(row, "idle").value_or(0));
        it->second.first += info_integer(row, "pending").value_or(0);
        if (!added) it->second.second = std::min(it->second.second, info_integer(row, "idle").value_or(0));
      }
    }
  }
  if (groups_known) {
    out.groups.emplace();
    for (const auto& [name, g] : groups) {
      ConsumerGroupInfo info{name, g.streams, g.pending, g.lag, g.consumers.size(), {}};
      for (const auto& [consumer, figures] : g.consumers) {
        if (info.consumers.size() >= kMaxNamesListed) break;
        info.consumers.push_back({consumer, figures.first, figures.second});
      }
      out.groups->push_back(std::move(info));
    }
  }

  // Dead letters: the total, and the reasons of the newest ones.
  for (size_t d = 0; d < dead_.size(); ++d) {
    const Reply& len = replies[dead_at + d];
    check(len, "XLEN " + dead_[d].key);
    out.dead.total += len.integer;
    if (dead_ranges[d].error) check(*dead_ranges[d].error, "XREVRANGE " + dead_[d].key);
    for (const ScannedEntry& e : dead_ranges[d].entries) {
      ++out.dead.scanned;
      ++out.dead.by_reason[e.field(entry_field::kReason).value_or("")];
    }
  }
  out.relays = relays_of(redis_, layout.ns);
  return out;
}

Timeline Inspector::timeline() {
  const TaskPlacement& layout = producer_.placement();
  Timeline out;
  out.now_ms = producer_.now_ms();
  const long long now = out.now_ms;
  for (const TimelineRange& range : kTimelineRanges) out.horizon_ms = std::max(out.horizon_ms, range.step_ms * range.steps);
  std::vector<ClusterClient::Routed> commands;
  for (int b = 0; b < layout.buckets; ++b) {
    const std::string key = KeyLayout(layout.ns, b).schedule_key();
    const int slot = TaskPlacement::slot_of_bucket(b);
    commands.push_back({slot, {"ZCOUNT", key, "-inf", std::to_string(now)}});
    for (const TimelineRange& range : kTimelineRanges) {
      for (const auto& [lo, hi] : timeline_bounds(now, range)) commands.push_back({slot, {"ZCOUNT", key, lo, hi}});
    }
    commands.push_back({slot, {"ZCOUNT", key, "(" + std::to_string(now + out.horizon_ms), "+inf"}});
  }
  const std::vector<Reply> replies = redis_.batch(commands);
  for (const Reply& r : replies) check(r, "ZCOUNT");
  // Per bucket: the overdue, each bar of each range, those beyond.
  const size_t per_bucket = replies.size() / static_cast<size_t>(layout.buckets);
  size_t offset = 1;
  for (const TimelineRange& range : kTimelineRanges) {
    TimelineBars bars{range.name, range.step_ms, std::vector<long long>(static_cast<size_t>(range.steps), 0)};
    for (int b = 0; b < layout.buckets; ++b) {
      for (int i = 0; i < range.steps; ++i) {
        bars.counts[static_cast<size_t>(i)] += replies[static_cast<size_t>(b) * per_bucket + offset + i].integer;
      }
    }
    offset += static_cast<size_t>(range.steps);
    out.ranges.push_back(std::move(bars));
  }
  for (int b = 0; b < layout.buckets; ++b) {
    out.overdue += replies[static_cast<size_t>(b) * per_bucket].integer;
    out.beyond += replies[static_cast<size_t>(b) * per_bucket + per_bucket - 1].integer;
  }
  return out;
}

}  // namespace expiry
