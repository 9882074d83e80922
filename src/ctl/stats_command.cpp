// stats: the schedule's size and head, and the stream and consumer group it feeds.
#include <algorithm>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/task_listing.h"
#include "functions/key_layout.h"
#include "io/sync/sync_connection.h"
#include "redis/redis_error.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

struct GroupInfo {
  std::optional<long long> lag;
  std::optional<long long> pending;
};

std::optional<long long> integer_of(const Reply& r) {
  if (r.type == Reply::Type::Integer) return r.integer;
  if (r.type == Reply::Type::String) return to_integer(r.str);
  return std::nullopt;  // Nil: Redis cannot compute it (e.g. lag after deletions)
}

// The named group's lag and pending counts from XINFO GROUPS; nullopt if the group is absent.
std::optional<GroupInfo> find_group(const Reply& groups, const std::string& name) {
  if (groups.type != Reply::Type::Array) return std::nullopt;
  for (const Reply& g : groups.elements) {
    if (g.type != Reply::Type::Array) continue;
    if (field_value(g, "name") != name) continue;
    GroupInfo info;
    for (size_t i = 0; i + 1 < g.elements.size(); i += 2) {
      if (g.elements[i].str == "lag") info.lag = integer_of(g.elements[i + 1]);
      if (g.elements[i].str == "pending") info.pending = integer_of(g.elements[i + 1]);
    }
    return info;
  }
  return std::nullopt;
}

nlohmann::json nullable(const std::optional<long long>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string text_of(const std::optional<long long>& v) { return v ? std::to_string(*v) : "null"; }

}  // namespace

int run_stats(const CtlTarget& target, const StatsOptions& options) {
  CtlSession session(target);
  const TaskPlacement& layout = session.layout;
  const std::vector<std::string> streams = layout.streams();
  const bool bucketed = layout.bucket_streams();
  // One clock for every bucket: the node of bucket 0's (the nodes of a cluster share a host clock).
  const long long now = session.producer.now_ms();

  // Per bucket: its schedule, and the stream it forwards to by default (one for all on a
  // single-bucket Redis, where the stream is read with bucket 0).
  std::vector<ClusterClient::Routed> commands;
  std::vector<size_t> first;  // per bucket: the index of its ZCARD
  for (int b = 0; b < layout.buckets; ++b) {
    const KeyLayout keys(layout.ns, b);
    const int slot = TaskPlacement::slot_of_bucket(b);
    const std::string& stream = streams[bucketed ? static_cast<size_t>(b) : 0];
    first.push_back(commands.size());
    commands.push_back({slot, {"ZCARD", keys.schedule_key()}});
    commands.push_back({slot, {"ZCOUNT", keys.schedule_key(), "-inf", std::to_string(now)}});
    commands.push_back({slot, {"ZRANGE", keys.schedule_key(), "0", "0", "WITHSCORES"}});
    commands.push_back({slot, {"GET", layout.paused_key_of_bucket(b)}});
    commands.push_back({slot, {"PTTL", layout.paused_key_of_bucket(b)}});
    if (!bucketed && b > 0) continue;
    commands.push_back({slot, {"XLEN", stream}});
    commands.push_back({slot, {"EXISTS", stream}});
    commands.push_back({slot, {"XINFO", "GROUPS", stream}});
  }
  const std::vector<Reply> replies = session.redis.batch(commands);

  long long pending = 0;
  long long overdue = 0;
  long long length = 0;
  std::optional<long long> next_due;
  size_t streams_existing = 0;
  size_t groups_found = 0;
  std::optional<long long> lag = 0;  // summed; unknown as soon as one group's is
  long long group_pending = 0;
  std::vector<long long> paused_buckets;  // the pause end of each paused bucket (0: until resumed)
  bool pause_unknown = false;             // some bucket's flag could not be read (NOPERM)
  for (int b = 0; b < layout.buckets; ++b) {
    const Reply* r = &replies[first[static_cast<size_t>(b)]];
    expect_ok(r[0], "ZCARD");
    expect_ok(r[1], "ZCOUNT");
    expect_ok(r[2], "ZRANGE");
    // A user whose ACL predates the pause flag may not read it: the pause is then unknown
    // (null), and the rest of the report stands.
    if (classify(r[3]) == RedisErrorKind::NoPermission || classify(r[4]) == RedisErrorKind::NoPermission) {
      pause_unknown = true;
    } else {
      expect_ok(r[3], "GET");
      expect_ok(r[4], "PTTL");
    }
    // A pause flag (expiry_pause): its value is the end ms, 0 until resumed; a timed one whose
    // end has come counts as over before its key expires, as the library reads it. A flag that
    // holds no end but expires (set by hand) ends when it expires (PTTL).
    if (!pause_unknown && r[3].type == Reply::Type::String) {
      long long until = to_integer(r[3].str).value_or(0);
      if (until == 0 && r[4].type == Reply::Type::Integer && r[4].integer > 0) until = now + r[4].integer;
      if (until == 0) {
        paused_buckets.push_back(0);
      } else if (until > now) {
        paused_buckets.push_back(until);
      }
    }
    pending += r[0].integer;
    overdue += r[1].integer;
    const Reply& head = r[2];
    if (head.type == Reply::Type::Array && head.elements.size() == 2) {
      if (auto due = score_to_ms(head.elements[1].str)) next_due = next_due ? std::min(*next_due, *due) : *due;
    }
    r += 2;  // past GET and PTTL: the stream's replies follow
    if (!bucketed && b > 0) continue;
    expect_ok(r[3], "XLEN");  // before EXISTS: without read access to the stream, XLEN is named
    expect_ok(r[4], "EXISTS");
    // XINFO GROUPS of a missing stream is an error reply; it only counts when the stream exists.
    const bool exists = r[4].type == Reply::Type::Integer && r[4].integer > 0;
    length += r[3].integer;
    if (!exists) continue;
    ++streams_existing;
    expect_ok(r[5], "XINFO GROUPS");
    const auto group = find_group(r[5], target.group);
    if (!group) continue;
    ++groups_found;
    lag = lag && group->lag ? std::optional<long long>(*lag + *group->lag) : std::nullopt;
    if (group->pending) group_pending += *group->pending;
  }
  // Paused when any bucket is; until the latest end, or 0 when one is paused until resumed.
  const bool paused = !pause_unknown && !paused_buckets.empty();
  std::optional<long long> paused_until;
  if (paused) {
    paused_until = *std::max_element(paused_buckets.begin(), paused_buckets.end());
    if (std::find(paused_buckets.begin(), paused_buckets.end(), 0) != paused_buckets.end()) paused_until = 0;
  }
  std::optional<long long> next_due_in;
  if (next_due) next_due_in = *next_due - now;
  const bool stream_exists = streams_existing > 0;
  const bool group_exists = groups_found > 0;
  if (!group_exists) lag = std::nullopt;
  const std::optional<long long> pending_in_group =
      group_exists ? std::optional<long long>(group_pending) : std::nullopt;
  // The stream, or on bucket streams their pattern.
  const std::string stream = bucketed ? layout.ns + ":{*}:stream" : streams.front();

  if (options.json) {
    nlohmann::json out = {{"namespace", target.ns},
                          {"cluster", layout.cluster},
                          {"buckets", layout.buckets},
                          {"now_ms", now},
                          {"pending", pending},
                          {"overdue", overdue},
                          {"paused", pause_unknown ? nlohmann::json() : nlohmann::json(paused)},
                          {"paused_until_ms", nullable(paused_until)},
                          {"paused_buckets", paused_buckets.size()},
                          {"next_due_ms", nullable(next_due)},
                          {"next_due_in_ms", nullable(next_due_in)},
                          {"stream", stream},
                          {"streams", streams},
                          {"streams_existing", streams_existing},
                          {"stream_exists", stream_exists},
                          {"stream_length", length},
                          {"group", target.group},
                          {"group_exists", group_exists},
                          {"group_lag", nullable(lag)},
                          {"group_pending", nullable(pending_in_group)}};
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  std::cout << "namespace: " << target.ns << "\n";
  if (bucketed) {
    std::cout << "cluster: " << (layout.cluster ? "true" : "false") << "\n"
              << "buckets: " << layout.buckets << "\n";
  }
  std::cout << "now_ms: " << now << "\n"
            << "pending: " << pending << "\n"
            << "overdue: " << overdue << "\n"
            << "paused: " << (pause_unknown ? "unknown (the Redis user may not read " + layout.ns + ":{B}:paused)"
                                            : paused ? "true" : "false");
  if (paused && !pause_unknown) {
    std::cout << " (" << paused_buckets.size() << " of " << layout.buckets << " bucket"
              << (layout.buckets == 1 ? "" : "s") << ", ";
    const auto iso = *paused_until > 0 ? iso8601_utc(*paused_until) : std::nullopt;
    if (*paused_until == 0) {
      std::cout << "until resumed)";
    } else {
      std::cout << "until " << (iso ? *iso : std::to_string(*paused_until)) << ")";
    }
  }
  std::cout << "\n"
            << "paused_until_ms: " << text_of(paused_until) << "\n"
            << "next_due_ms: " << text_of(next_due) << "\n"
            << "next_due_in_ms: " << text_of(next_due_in) << "\n";
  if (bucketed) {
    std::cout << "streams: " << streams.size() << " bucket streams " << escape_text(stream) << " ("
              << streams_existing << " exist)\n";
  } else {
    std::cout << "stream: " << escape_text(stream) << "\n"
              << "stream_exists: " << (stream_exists ? "true" : "false") << "\n";
  }
  std::cout << "stream_length: " << length << "\n"
            << "group: " << escape_text(target.group) << "\n"
            << "group_exists: " << (group_exists ? "true" : "false");
  if (bucketed) std::cout << " (on " << groups_found << " of the streams)";
  std::cout << "\n"
            << "group_lag: " << text_of(lag) << "\n"
            << "group_pending: " << text_of(pending_in_group) << "\n";
  if (!stream_exists) {
    std::cout.flush();
    if (bucketed) {
      std::cerr << "expiry-ctl: no bucket stream of namespace " << escape_text(target.ns)
                << " exists (yet): a relay creates them when it starts; check that one runs with this namespace\n";
    } else {
      std::cerr << "expiry-ctl: stream " << escape_text(stream)
                << " does not exist (yet): the relay creates it when it starts; check that one runs with this "
                   "stream (--stream, --namespace, --config, EXPIRY_RELAY_STREAM)\n";
    }
  }
  return kExitOk;
}

}  // namespace expiry
