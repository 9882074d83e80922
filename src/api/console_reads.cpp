// See console_reads.h.
#include "api/console_reads.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "api/console_views.h"
#include "api/task_json.h"
#include "base/errors.h"
#include "functions/key_layout.h"
#include "functions/recur_calls.h"
#include "functions/stream_entry.h"
#include "inspector/dead_letter_refs.h"
#include "inspector/entry_format.h"
#include "inspector/inspector.h"
#include "io/sync/routed_client.h"
#include "io/sync/stream_scan.h"
#include "producer/producer.h"
#include "producer/task_placement.h"
#include "redis/redis_error.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

using json = nlohmann::json;

// Consumer groups whose consumers the overview lists (XINFO CONSUMERS per stream and group), and
// the consumers and relays it names at most.
constexpr size_t kMaxGroupReads = 256;
constexpr size_t kMaxNamesListed = 100;

void check(const Reply& r, const std::string& what) {
  if (r.is_io_error()) throw IoError(what + ": " + r.str);
  if (r.failed()) throw ReplyError(what + ": " + r.str);
}

// A reply that is unknown rather than fatal: an error (NOPERM, a missing stream) is nullopt; a
// lost connection still throws.
const Reply* optional_reply(const Reply& r) {
  if (r.is_io_error()) throw IoError(r.str);
  return r.failed() ? nullptr : &r;
}

struct RangeEntry {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;

  std::optional<std::string> field(std::string_view name) const {
    for (const auto& [k, v] : fields) {
      if (k == name) return v;
    }
    return std::nullopt;
  }
  json fields_json() const {
    json out = json::object();
    for (const auto& [k, v] : fields) out[k] = v;
    return out;
  }
};

// The entries of an XRANGE / XREVRANGE reply (anything else: none).
std::vector<RangeEntry> entries_of(const Reply& r) {
  std::vector<RangeEntry> out;
  if (r.type != Reply::Type::Array) return out;
  for (const Reply& e : r.elements) {
    if (e.type != Reply::Type::Array || e.elements.size() != 2) continue;
    out.push_back({e.elements[0].str, field_pairs(e.elements[1])});
  }
  return out;
}

std::optional<long long> integer_of(const Reply& r) {
  if (r.type == Reply::Type::Integer) return r.integer;
  if (r.type == Reply::Type::String) return to_integer(r.str);
  return std::nullopt;
}

// The value named `name` in a flat name/value array (an XINFO row).
const Reply* info_value(const Reply& row, std::string_view name) {
  if (row.type != Reply::Type::Array) return nullptr;
  for (size_t i = 0; i + 1 < row.elements.size(); i += 2) {
    if (row.elements[i].str == name) return &row.elements[i + 1];
  }
  return nullptr;
}

std::optional<long long> info_integer(const Reply& row, std::string_view name) {
  const Reply* v = info_value(row, name);
  return v ? integer_of(*v) : std::nullopt;
}

json nullable(const std::optional<long long>& v) { return v ? json(*v) : json(); }
json nullable(const std::optional<std::string>& v) { return v ? json(*v) : json(); }

// The slot of stream `s` of layout.streams(): its bucket's, or bucket 0's for the one stream.
int slot_of_stream(const TaskPlacement& layout, size_t s) {
  return TaskPlacement::slot_of_bucket(layout.bucket_streams() ? static_cast<int>(s) : 0);
}

// One consumer group across the streams it reads.
struct GroupSummary {
  long long streams = 0;
  long long pending = 0;
  std::optional<long long> lag = 0;  // unknown as soon as one stream's is
  std::map<std::string, std::pair<long long, long long>> consumers;  // name: pending, smallest idle ms
};

}  // namespace

json read_overview(Producer& producer, const std::string& dead_stream) {
  const TaskPlacement& layout = producer.placement();
  RoutedClient& redis = producer.client();
  // The schedules: pending, overdue, head and pause of each bucket (as expiry-ctl stats reads them).
  const NamespaceStats stats = Inspector(producer).stats();
  const long long now = stats.now_ms;
  const std::vector<std::string> streams = layout.streams();
  const auto dead = dead_streams(layout, dead_stream);
  const long long per_stream = std::max<long long>(20, kActivitySampleEntries / static_cast<long long>(streams.size()));
  const long long per_dead = std::max<long long>(10, kDeadReasonScan / static_cast<long long>(dead.size()));

  std::vector<ClusterClient::Routed> commands;
  const size_t streams_at = commands.size();
  std::vector<StreamRange> recent;
  for (size_t s = 0; s < streams.size(); ++s) {
    const int slot = slot_of_stream(layout, s);
    commands.push_back({slot, {"XINFO", "GROUPS", streams[s]}});
    recent.push_back({slot, streams[s], true, std::to_string(now - kActivityWindowMs), "+", per_stream});
  }
  const size_t dead_at = commands.size();
  std::vector<StreamRange> newest_dead;
  for (const DeadStream& d : dead) {
    commands.push_back({d.slot, {"XLEN", d.key}});
    newest_dead.push_back({d.slot, d.key, true, "-", "+", per_dead});
  }
  const std::vector<Reply> replies = redis.batch(commands);
  const auto sampled_ranges = scan_streams(
      redis, recent,
      {kActivityScanBytes, kScanPageBytes, {entry_field::kDueMs, entry_field::kFiredMs, entry_field::kCreatedMs}});
  const auto dead_ranges = scan_streams(redis, newest_dead, {kDeadReasonScanBytes, kScanPageBytes, {entry_field::kReason}});

  json per_bucket = json::array();
  for (const BucketStats& b : stats.buckets) {
    const bool paused = b.paused_until.has_value();
    per_bucket.push_back({{"bucket", b.bucket},
                          {"pending", b.pending},
                          {"overdue", b.overdue},
                          {"next_due_ms", nullable(b.next_due_ms)},
                          {"paused", b.pause_known ? json(paused) : json()},  // null: the user may not read the flag
                          {"paused_until_ms", b.pause_known && paused ? json(*b.paused_until) : json()}});
  }
  const long long pending = stats.pending, overdue = stats.overdue, paused_buckets = stats.paused_buckets;
  const std::optional<long long> next_due = stats.next_due_ms;

  // Activity: the entries forwarded in the last window (capped per stream and in bytes; a capped
  // stream's rate is taken over the time its sample covers), and their lateness (fired_ms - due_ms).
  json activity = nullptr;
  std::map<std::string, GroupSummary> groups;
  bool groups_known = true;
  std::vector<std::pair<size_t, std::string>> group_reads;  // stream index, group
  {
    double per_second = 0;
    long long sampled = 0;
    bool capped = false;
    bool known = true;
    std::vector<long long> lateness;
    for (size_t s = 0; s < streams.size(); ++s) {
      const Reply& info = replies[streams_at + s];
      const ScannedRange& range = sampled_ranges[s];
      if (info.is_io_error()) throw IoError(info.str);
      if (range.error) {
        known = false;
      } else {
        const auto& entries = range.entries;
        sampled += static_cast<long long>(entries.size());
        long long covered_ms = kActivityWindowMs;
        if (!range.complete) {
          capped = true;
          if (!entries.empty()) {
            covered_ms = std::max<long long>(1, now - entry_id_ms(entries.back().id).value_or(now - kActivityWindowMs));
          }
        }
        per_second += static_cast<double>(entries.size()) * 1000.0 / static_cast<double>(covered_ms);
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
      // XINFO GROUPS of a stream not yet written is an error: no groups there. NOPERM: unknown.
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
    if (known) {
      const auto rounded = std::round(per_second * 100.0) / 100.0;
      activity = {{"window_ms", kActivityWindowMs},
                  {"sampled", sampled},
                  {"capped", capped},
                  {"forwarded_per_second", rounded},
                  {"lateness_p50_ms", nullable(percentile(lateness, 50))},
                  {"lateness_p99_ms", nullable(percentile(lateness, 99))}};
    }
  }
  // The consumers of each group, merged across the streams by name.
  if (!group_reads.empty()) {
    std::vector<ClusterClient::Routed> reads;
    for (const auto& [s, group] : group_reads) {
      reads.push_back({slot_of_stream(layout, s), {"XINFO", "CONSUMERS", streams[s], group}});
    }
    const std::vector<Reply> answers = redis.batch(reads);
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
  json groups_json = nullptr;
  if (groups_known) {
    groups_json = json::array();
    for (const auto& [name, g] : groups) {
      json consumers = json::array();
      for (const auto& [consumer, figures] : g.consumers) {
        if (consumers.size() >= kMaxNamesListed) break;
        consumers.push_back({{"name", consumer}, {"pending", figures.first}, {"idle_ms", figures.second}});
      }
      groups_json.push_back({{"name", name},
                             {"streams", g.streams},
                             {"pending", g.pending},
                             {"lag", nullable(g.lag)},
                             {"consumer_count", g.consumers.size()},
                             {"consumers", consumers}});
    }
  }

  // Dead letters: the total, and the reasons of the newest ones.
  long long dead_total = 0, dead_scanned = 0;
  std::map<std::string, long long> reasons;
  for (size_t d = 0; d < dead.size(); ++d) {
    const Reply& len = replies[dead_at + d];
    check(len, "XLEN " + dead[d].key);
    dead_total += len.integer;
    if (dead_ranges[d].error) check(*dead_ranges[d].error, "XREVRANGE " + dead[d].key);
    for (const ScannedEntry& e : dead_ranges[d].entries) {
      ++dead_scanned;
      ++reasons[e.field(entry_field::kReason).value_or("")];
    }
  }

  // Relays: each subscribes to its own health channel NS:health:<instance> (on every primary of
  // a cluster), so the channels with a subscriber name the relays connected now.
  json relays = nullptr;
  try {
    std::set<std::string> instances;
    bool known = true;
    const std::string prefix = layout.ns + ":health:";
    for (const NodeAddress& node : redis.primaries()) {
      const Reply r = redis.command_on(node, {"PUBSUB", "CHANNELS", prefix + "*"});
      if (r.is_io_error()) throw IoError(r.str);
      if (r.failed()) {
        known = false;
        break;
      }
      for (const Reply& c : r.elements) instances.insert(c.str.substr(std::min(prefix.size(), c.str.size())));
    }
    if (known) {
      json names = json::array();
      for (const std::string& n : instances) {
        if (names.size() >= kMaxNamesListed) break;
        names.push_back(n);
      }
      relays = {{"count", instances.size()}, {"instances", names}};
    }
  } catch (const IoError&) {
    throw;
  } catch (const Error&) {  // no node list (a cluster between slot maps): unknown this time, ignored
  }

  return {{"now_ms", now},
          {"namespace", layout.ns},
          {"cluster", layout.cluster},
          {"buckets", layout.buckets},
          {"pending", pending},
          {"overdue", overdue},
          {"next_due_ms", nullable(next_due)},
          {"paused_buckets", paused_buckets},
          {"per_bucket", per_bucket},
          {"activity", activity},
          {"dead", {{"total", dead_total}, {"scanned", dead_scanned}, {"by_reason", reasons}}},
          {"groups", groups_json},
          {"relays", relays}};
}

json read_timeline(Producer& producer) {
  const TaskPlacement& layout = producer.placement();
  const long long now = producer.now_ms();
  long long horizon = 0;
  for (const TimelineRange& range : kTimelineRanges) horizon = std::max(horizon, range.step_ms * range.steps);
  std::vector<ClusterClient::Routed> commands;
  for (int b = 0; b < layout.buckets; ++b) {
    const std::string key = KeyLayout(layout.ns, b).schedule_key();
    const int slot = TaskPlacement::slot_of_bucket(b);
    commands.push_back({slot, {"ZCOUNT", key, "-inf", std::to_string(now)}});
    for (const TimelineRange& range : kTimelineRanges) {
      for (const auto& [lo, hi] : timeline_bounds(now, range)) commands.push_back({slot, {"ZCOUNT", key, lo, hi}});
    }
    commands.push_back({slot, {"ZCOUNT", key, "(" + std::to_string(now + horizon), "+inf"}});
  }
  const std::vector<Reply> replies = producer.client().batch(commands);
  for (const Reply& r : replies) check(r, "ZCOUNT");
  const size_t per_bucket = replies.size() / static_cast<size_t>(layout.buckets);
  long long overdue = 0, beyond = 0;
  json ranges = json::array();
  size_t offset = 1;
  for (const TimelineRange& range : kTimelineRanges) {
    std::vector<long long> counts(static_cast<size_t>(range.steps), 0);
    for (int b = 0; b < layout.buckets; ++b) {
      for (int i = 0; i < range.steps; ++i) {
        counts[static_cast<size_t>(i)] += replies[static_cast<size_t>(b) * per_bucket + offset + i].integer;
      }
    }
    offset += static_cast<size_t>(range.steps);
    ranges.push_back({{"name", range.name}, {"step_ms", range.step_ms}, {"counts", counts}});
  }
  for (int b = 0; b < layout.buckets; ++b) {
    overdue += replies[static_cast<size_t>(b) * per_bucket].integer;
    beyond += replies[static_cast<size_t>(b) * per_bucket + per_bucket - 1].integer;
  }
  return {{"now_ms", now}, {"overdue", overdue}, {"beyond", beyond}, {"horizon_ms", horizon}, {"ranges", ranges}};
}

json read_recurring(Producer& producer, long long limit) {
  const TaskPlacement& layout = producer.placement();
  RoutedClient& redis = producer.client();
  json schedules = json::array();
  bool more = false;
  for (int b = 0; b < layout.buckets && !more; ++b) {
    const KeyLayout keys(layout.ns, b);
    const int slot = TaskPlacement::slot_of_bucket(b);
    std::string cursor = "0";
    do {
      const Reply reply = redis.fcall(recur_list_argv(keys, cursor, 100), slot);
      check(reply, "FCALL expiry_v2_recur_list");
      const auto page = decode_recur_list(reply);
      if (!page) throw ReplyError("unexpected reply to expiry_v2_recur_list: " + reply.describe());
      for (const std::string& id : page->ids) {
        if (static_cast<long long>(schedules.size()) >= limit) {
          more = true;
          break;
        }
        const Reply got = redis.fcall(recur_get_argv(keys, id), slot);
        check(got, "FCALL expiry_v2_recur_get");
        const auto def = decode_recur_get(got);
        if (!def) throw ReplyError("unexpected reply to expiry_v2_recur_get: " + got.describe());
        if (def->empty()) continue;  // deleted meanwhile
        const auto text = [&](const char* name) -> std::optional<std::string> {
          const auto it = def->find(name);
          if (it == def->end() || it->second.empty()) return std::nullopt;
          return it->second;
        };
        const auto number = [&](const char* name) -> std::optional<long long> {
          const auto t = text(name);
          return t ? to_integer(*t) : std::nullopt;
        };
        schedules.push_back({{"id", id},
                             {"rule", nullable(text("rule"))},
                             {"tz", nullable(text("tz"))},
                             {"misfire", nullable(text("misfire"))},
                             {"paused", text("paused") == std::optional<std::string>("1")},
                             {"ended", text("ended") == std::optional<std::string>("1")},
                             {"next_ms", nullable(number("armed_ms"))},
                             {"next_local", nullable(text("armed_local"))},
                             {"last_ms", nullable(number("last_ms"))},
                             {"fired", nullable(number("fired"))},
                             {"skipped", nullable(number("skipped"))}});
      }
      cursor = page->cursor;
    } while (cursor != "0" && !more);
    if (static_cast<long long>(schedules.size()) >= limit && (cursor != "0" || b + 1 < layout.buckets)) more = true;
  }
  return {{"schedules", schedules}, {"count", schedules.size()}, {"more", more}};
}

json read_task_state(Producer& producer, const std::string& dead_stream, const std::string& id) {
  const TaskDetails task = producer.show(id);
  json out = {{"id", id}, {"state", "unknown"}, {"task", nullptr}, {"fired", nullptr}, {"dead", nullptr}};
  if (task.pending) {
    out["state"] = "pending";
    out["task"] = task_details_json(id, task);
    return out;
  }
  const TaskPlacement& layout = producer.placement();
  RoutedClient& redis = producer.client();
  const int bucket = layout.bucket_of_task(id);
  const std::string stream = layout.default_stream_of_bucket(bucket);
  const int stream_slot = slot_of_stream(layout, layout.bucket_streams() ? static_cast<size_t>(bucket) : 0);
  const auto dead = dead_streams(layout, dead_stream);
  size_t d = 0;
  for (size_t i = 0; i < dead.size(); ++i) {
    if (dead[i].bucket == bucket) d = i;
  }
  const Reply groups_reply = redis.command({"XINFO", "GROUPS", stream}, stream_slot);
  if (groups_reply.is_io_error()) throw IoError(groups_reply.str);
  // The newest entries' ids and task ids only; then the one found, whole.
  const auto scanned = scan_streams(redis,
                                    {{stream_slot, stream, true, "-", "+", kStateScanEntries},
                                     {dead[d].slot, dead[d].key, true, "-", "+", kStateScanEntries}},
                                    {2 * kStateScanBytes, kScanPageBytes, {entry_field::kId}});
  if (scanned[0].error) check(*scanned[0].error, "XREVRANGE " + stream);
  if (scanned[1].error) check(*scanned[1].error, "XREVRANGE " + dead[d].key);
  out["stream"] = stream;
  out["dead_stream"] = dead[d].key;
  out["scanned"] = {{"stream", scanned[0].entries.size()}, {"dead", scanned[1].entries.size()}};

  const auto whole_entry = [&](int slot, const std::string& key, const std::vector<ScannedEntry>& entries) {
    const auto at = std::find_if(entries.begin(), entries.end(), [&](const ScannedEntry& e) {
      return e.field(entry_field::kId) == std::optional<std::string>(id);
    });
    std::vector<RangeEntry> found;
    if (at != entries.end()) {
      const Reply r = redis.command({"XRANGE", key, at->id, at->id}, slot);
      check(r, "XRANGE " + key);
      found = entries_of(r);  // empty if trimmed or deleted meanwhile
    }
    return found;
  };
  const auto forwarded = whole_entry(stream_slot, stream, scanned[0].entries);
  const auto dead_letters = whole_entry(dead[d].slot, dead[d].key, scanned[1].entries);
  const auto mine = [&](const RangeEntry& e) { return e.field(entry_field::kId) == std::optional<std::string>(id); };
  const auto fired = std::find_if(forwarded.begin(), forwarded.end(), mine);
  if (fired != forwarded.end()) {
    const auto due = fired->field(entry_field::kDueMs);
    const auto at = fired->field(entry_field::kFiredMs);
    json f = {{"stream", stream},
              {"entry_id", fired->id},
              {"due_ms", nullable(due ? to_integer(*due) : std::nullopt)},
              {"fired_ms", nullable(at ? to_integer(*at) : std::nullopt)},
              {"fields", fired->fields_json()},
              {"groups", nullptr}};
    // Each group: read and acknowledged, read and still pending (XPENDING holds it), or not read
    // yet (the entry is past the group's last-delivered-id).
    if (const Reply* info = optional_reply(groups_reply)) {
      std::vector<std::pair<std::string, std::string>> groups;  // name, last-delivered-id
      for (const Reply& row : info->elements) {
        const Reply* name = info_value(row, "name");
        const Reply* last = info_value(row, "last-delivered-id");
        if (name != nullptr && groups.size() < kMaxNamesListed) groups.emplace_back(name->str, last ? last->str : "0-0");
      }
      std::vector<ClusterClient::Routed> reads;
      for (const auto& g : groups) {
        reads.push_back({stream_slot, {"XPENDING", stream, g.first, fired->id, fired->id, "1"}});
      }
      const std::vector<Reply> pending = reads.empty() ? std::vector<Reply>() : redis.batch(reads);
      json states = json::array();
      for (size_t i = 0; i < groups.size(); ++i) {
        json g = {{"group", groups[i].first}, {"state", "acknowledged"}, {"consumer", nullptr}, {"deliveries", nullptr}};
        const Reply* p = optional_reply(pending[i]);
        if (p == nullptr) {
          g["state"] = nullptr;
        } else if (!p->elements.empty() && p->elements[0].elements.size() >= 4) {
          g["state"] = "delivered";
          g["consumer"] = p->elements[0].elements[1].str;
          g["deliveries"] = nullable(integer_of(p->elements[0].elements[3]));
        } else if (entry_id_before(groups[i].second, fired->id)) {
          g["state"] = "unread";
        }
        states.push_back(std::move(g));
      }
      f["groups"] = std::move(states);
    }
    out["fired"] = std::move(f);
    out["state"] = "fired";
  }
  const auto died = std::find_if(dead_letters.begin(), dead_letters.end(), mine);
  if (died != dead_letters.end()) {
    const auto deliveries = died->field(entry_field::kDeliveries);
    out["dead"] = {{"entry", format_dead_ref(dead, {d, died->id})},
                   {"stream", dead[d].key},
                   {"entry_id", died->id},
                   {"when_ms", nullable(entry_id_ms(died->id))},
                   {"reason", nullable(died->field(entry_field::kReason))},
                   {"deliveries", nullable(deliveries ? to_integer(*deliveries) : std::nullopt)},
                   {"fields", died->fields_json()}};
    out["state"] = "dead";
  }
  return out;
}

}  // namespace expiry
