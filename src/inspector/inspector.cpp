// See inspector.h.
#include "inspector/inspector.h"

#include <algorithm>

#include "base/errors.h"
#include "base/text_escape.h"
#include "functions/key_layout.h"
#include "functions/task_values.h"
#include "inspector/reply_reads.h"
#include "io/sync/routed_client.h"
#include "io/sync/sync_connection.h"
#include "producer/producer.h"
#include "producer/task.h"
#include "producer/task_placement.h"
#include "redis/redis_error.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

using inspector_reads::integer_of;

// Reads group `name`'s row of an XINFO GROUPS reply into `stream`; false if the group is absent.
bool read_group(const Reply& groups, const std::string& name, StreamStats& stream) {
  if (groups.type != Reply::Type::Array) return false;
  for (const Reply& g : groups.elements) {
    if (g.type != Reply::Type::Array) continue;
    if (field_value(g, "name") != name) continue;
    for (size_t i = 0; i + 1 < g.elements.size(); i += 2) {
      if (g.elements[i].str == "lag") stream.group_lag = integer_of(g.elements[i + 1]);
      if (g.elements[i].str == "pending") stream.group_pending = integer_of(g.elements[i + 1]);
    }
    stream.group_exists = true;
    return true;
  }
  return false;
}

// The entries of an XRANGE / XREVRANGE reply of dead stream `stream`.
std::vector<DeadLetter> dead_letters_of(const Reply& reply, size_t stream, const std::string& what) {
  expect_ok(reply, what);
  if (reply.type != Reply::Type::Array) throw ReplyError(what + ": unexpected reply " + reply.describe());
  std::vector<DeadLetter> out;
  for (const Reply& e : reply.elements) {
    if (e.type != Reply::Type::Array || e.elements.size() != 2) {
      throw ReplyError(what + ": unexpected entry " + e.describe());
    }
    out.push_back({{stream, e.elements[0].str}, field_pairs(e.elements[1])});
  }
  return out;
}

}  // namespace

std::optional<std::string> DeadLetter::field(std::string_view name) const {
  for (const auto& [k, v] : fields) {
    if (k == name) return v;
  }
  return std::nullopt;
}

Inspector::Inspector(Producer& producer, const std::string& dead_stream)
    : producer_(producer), redis_(producer.client()), dead_(expiry::dead_streams(producer.placement(), dead_stream)) {}

NamespaceStats Inspector::stats() { return read_stats(nullptr); }

NamespaceStats Inspector::stats(const std::string& group) { return read_stats(&group); }

NamespaceStats Inspector::read_stats(const std::string* group) {
  const TaskPlacement& layout = producer_.placement();
  NamespaceStats out;
  out.now_ms = producer_.now_ms();
  const long long now = out.now_ms;

  // Five reads per bucket, then (with a group) three per default stream.
  constexpr size_t kPerBucket = 5;
  std::vector<ClusterClient::Routed> commands;
  for (int b = 0; b < layout.buckets; ++b) {
    const KeyLayout keys(layout.ns, b);
    const int slot = TaskPlacement::slot_of_bucket(b);
    commands.push_back({slot, {"ZCARD", keys.schedule_key()}});
    commands.push_back({slot, {"ZCOUNT", keys.schedule_key(), "-inf", std::to_string(now)}});
    commands.push_back({slot, {"ZRANGE", keys.schedule_key(), "0", "0", "WITHSCORES"}});
    commands.push_back({slot, {"GET", layout.paused_key_of_bucket(b)}});
    commands.push_back({slot, {"PTTL", layout.paused_key_of_bucket(b)}});
  }
  const std::vector<std::string> streams = group ? layout.streams() : std::vector<std::string>{};
  for (size_t s = 0; s < streams.size(); ++s) {
    // A single stream is read with bucket 0's slot.
    const int slot = TaskPlacement::slot_of_bucket(layout.bucket_streams() ? static_cast<int>(s) : 0);
    commands.push_back({slot, {"XLEN", streams[s]}});
    commands.push_back({slot, {"EXISTS", streams[s]}});
    commands.push_back({slot, {"XINFO", "GROUPS", streams[s]}});
  }
  const std::vector<Reply> replies = redis_.batch(commands);

  std::vector<long long> paused_ends;  // the end of each paused bucket (0: until resumed)
  for (int b = 0; b < layout.buckets; ++b) {
    const Reply* r = &replies[static_cast<size_t>(b) * kPerBucket];
    expect_ok(r[0], "ZCARD");
    expect_ok(r[1], "ZCOUNT");
    expect_ok(r[2], "ZRANGE");
    BucketStats bucket;
    bucket.bucket = b;
    bucket.pending = r[0].integer;
    bucket.overdue = r[1].integer;
    if (r[2].type == Reply::Type::Array && r[2].elements.size() == 2) {
      bucket.next_due_ms = score_to_ms(r[2].elements[1].str);
    }
    // A user whose ACL predates the pause flag may not read it: the pause is then unknown.
    if (classify(r[3]) == RedisErrorKind::NoPermission || classify(r[4]) == RedisErrorKind::NoPermission) {
      bucket.pause_known = false;
    } else {
      expect_ok(r[3], "GET");
      expect_ok(r[4], "PTTL");
    }
    // A pause flag (expiry_pause): its value is the end ms, 0 until resumed; a timed one whose
    // end has come counts as over before its key expires, as the library reads it. A flag that
    // holds no end but expires (set by hand) ends when it expires (PTTL).
    if (bucket.pause_known && r[3].type == Reply::Type::String) {
      bucket.pause_flag = true;
      long long until = to_integer(r[3].str).value_or(0);
      if (until == 0 && r[4].type == Reply::Type::Integer && r[4].integer > 0) until = now + r[4].integer;
      if (until == 0 || until > now) bucket.paused_until = until;
    }
    out.pending += bucket.pending;
    out.overdue += bucket.overdue;
    if (bucket.next_due_ms) out.next_due_ms = out.next_due_ms ? std::min(*out.next_due_ms, *bucket.next_due_ms) : *bucket.next_due_ms;
    if (!bucket.pause_known) out.pause_known = false;
    if (bucket.pause_flag) ++out.pause_flags;
    if (bucket.paused_until) paused_ends.push_back(*bucket.paused_until);
    out.buckets.push_back(std::move(bucket));
  }
  out.paused_buckets = static_cast<long long>(paused_ends.size());
  if (!paused_ends.empty()) {
    const bool until_resumed = std::find(paused_ends.begin(), paused_ends.end(), 0) != paused_ends.end();
    out.paused_until = until_resumed ? 0 : *std::max_element(paused_ends.begin(), paused_ends.end());
  }

  long long group_lag = 0;
  bool lag_known = true;
  long long group_pending = 0;
  for (size_t s = 0; s < streams.size(); ++s) {
    const Reply* r = &replies[static_cast<size_t>(layout.buckets) * kPerBucket + s * 3];
    expect_ok(r[0], "XLEN");  // before EXISTS: without read access to the stream, XLEN is named
    expect_ok(r[1], "EXISTS");
    StreamStats stream;
    stream.key = streams[s];
    stream.length = r[0].integer;
    // XINFO GROUPS of a missing stream is an error reply; it only counts when the stream exists.
    stream.exists = r[1].type == Reply::Type::Integer && r[1].integer > 0;
    out.stream_length += stream.length;
    if (stream.exists) {
      ++out.streams_existing;
      expect_ok(r[2], "XINFO GROUPS");
      if (read_group(r[2], *group, stream)) {
        ++out.groups_found;
        if (stream.group_lag) {
          group_lag += *stream.group_lag;
        } else {
          lag_known = false;
        }
        if (stream.group_pending) group_pending += *stream.group_pending;
      }
    }
    out.streams.push_back(std::move(stream));
  }
  if (out.groups_found > 0) {
    if (lag_known) out.group_lag = group_lag;
    out.group_pending = group_pending;
  }
  return out;
}

std::vector<DeadRef> Inspector::parse_dead_refs(const std::vector<std::string>& texts) const {
  std::vector<DeadRef> refs;
  for (const std::string& text : texts) {
    std::string why;
    auto ref = parse_dead_ref(dead_, text, &why);
    if (!ref) throw ConfigError("entry '" + escape_text(text) + "': " + why);
    refs.push_back(*ref);
  }
  return refs;
}

DeadLetterList Inspector::list_dead_letters(long long limit) { return list_dead_letter_summaries(redis_, dead_, limit); }

std::vector<std::optional<DeadLetter>> Inspector::read_dead_letters(const std::vector<DeadRef>& refs) {
  std::vector<ClusterClient::Routed> commands;
  for (const DeadRef& r : refs) commands.push_back({dead_[r.stream].slot, {"XRANGE", dead_[r.stream].key, r.entry_id, r.entry_id}});
  const std::vector<Reply> replies = commands.empty() ? std::vector<Reply>{} : redis_.batch(commands);
  std::vector<std::optional<DeadLetter>> out;
  for (size_t i = 0; i < refs.size(); ++i) {
    auto found = dead_letters_of(replies[i], refs[i].stream, "XRANGE " + dead_[refs[i].stream].key);
    if (found.empty()) {
      out.emplace_back();
    } else {
      out.emplace_back(std::move(found.front()));
    }
  }
  return out;
}

std::vector<DeadLetter> Inspector::dead_letter_range(size_t stream, const std::string& start, const std::string& end,
                                                     long long count) {
  const DeadStream& dead = dead_[stream];
  const Reply r = redis_.command({"XRANGE", dead.key, start, end, "COUNT", std::to_string(count)}, dead.slot);
  return dead_letters_of(r, stream, "XRANGE " + dead.key);
}

std::optional<std::string> Inspector::newest_dead_letter_id(size_t stream) {
  const DeadStream& dead = dead_[stream];
  const Reply r = redis_.command({"XREVRANGE", dead.key, "+", "-", "COUNT", "1"}, dead.slot);
  const auto found = dead_letters_of(r, stream, "XREVRANGE " + dead.key);
  if (found.empty()) return std::nullopt;
  return found.front().ref.entry_id;
}

DeadReplay Inspector::replay_dead_letter(const DeadLetter& entry, long long delay_ms) {
  const TaskPlacement& layout = producer_.placement();
  const DeadStream& dead = dead_[entry.ref.stream];
  DeadReplay out;
  const auto task = entry.field("id");
  if (!task || task_id_error(*task)) {
    out.outcome = DeadReplay::Outcome::NoTaskId;
    return out;
  }
  out.task_id = *task;
  const KeyLayout keys = layout.keys_of_task(*task);
  out.task_bucket = keys.bucket();
  const int slot = TaskPlacement::slot_of_bucket(keys.bucket());
  if (layout.cluster && slot != dead.slot) {
    out.outcome = DeadReplay::Outcome::OutsideTaskSlot;
    return out;
  }
  const Reply r = redis_.fcall({"FCALL", "expiry_replay_dead", "4", dead.key, keys.schedule_key(),
                                keys.trigger_key(*task), keys.shadow_key(*task), entry.ref.entry_id, *task,
                                std::to_string(delay_ms), layout.default_stream_of_bucket(keys.bucket()),
                                std::to_string(layout.db)},
                               slot);
  if (r.type == Reply::Type::Error && r.str.find("already replayed or purged") != std::string::npos) {
    out.outcome = DeadReplay::Outcome::Gone;
    return out;
  }
  expect_ok(r, "FCALL expiry_replay_dead");
  const auto result = decode_schedule(r);
  if (!result) throw ReplyError("FCALL expiry_replay_dead: unexpected reply " + r.describe());
  out.outcome = DeadReplay::Outcome::Replayed;
  out.due_ms = result->due_ms;
  out.replaced = result->replaced;
  return out;
}

std::vector<bool> Inspector::purge_dead_letters(const std::vector<DeadRef>& refs) {
  std::vector<ClusterClient::Routed> commands;
  for (const DeadRef& r : refs) commands.push_back({dead_[r.stream].slot, {"XDEL", dead_[r.stream].key, r.entry_id}});
  const std::vector<Reply> replies = commands.empty() ? std::vector<Reply>{} : redis_.batch(commands);
  std::vector<bool> out;
  for (const Reply& r : replies) {
    expect_ok(r, "XDEL");
    out.push_back(r.integer > 0);
  }
  return out;
}

RangeResult Inspector::range_step(RangeAction action, int bucket, const RangeFilter& filter, const std::string& step,
                                  int limit) {
  const TaskPlacement& layout = producer_.placement();
  const KeyLayout keys(layout.ns, bucket);
  const std::vector<std::string> argv = action == RangeAction::Cancel
                                            ? cancel_range_argv(keys, filter, step, limit)
                                            : run_now_range_argv(keys, filter, step, limit, layout.db);
  const char* what = action == RangeAction::Cancel ? "FCALL expiry_cancel_range" : "FCALL expiry_run_now_range";
  const Reply reply = redis_.fcall(argv, TaskPlacement::slot_of_bucket(bucket));
  expect_ok(reply, what);
  const auto result = decode_range(reply);
  if (!result) throw ReplyError(std::string(what) + ": unexpected reply " + reply.describe());
  return *result;
}

AuditTrail Inspector::audit_trail(long long max_entries) {
  return AuditTrail(redis_, producer_.placement().ns, max_entries);
}

}  // namespace expiry
