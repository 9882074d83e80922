// stats: the schedule's size and head, and the stream and consumer group it feeds.
#include <iostream>

#include <nlohmann/json.hpp>

#include "ctl/ctl_commands.h"
#include "ctl/redis_values.h"
#include "io/sync/sync_connection.h"
#include "protocol/errors.h"
#include "protocol/key_layout.h"
#include "protocol/text_escape.h"

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
  const KeyLayout keys(target.ns);
  const std::string& stream = target.stream;
  SyncConnection conn(target.redis);
  const Reply time = conn.checked({"TIME"});
  const auto now = time_reply_ms(time);
  if (!now) throw ReplyError("TIME: unexpected reply " + time.describe());

  conn.append({"ZCARD", keys.schedule_key()});
  conn.append({"ZCOUNT", keys.schedule_key(), "-inf", std::to_string(*now)});
  conn.append({"ZRANGE", keys.schedule_key(), "0", "0", "WITHSCORES"});
  conn.append({"XLEN", stream});
  conn.append({"EXISTS", stream});
  conn.append({"XINFO", "GROUPS", stream});
  const Reply pending = conn.read_reply();
  const Reply overdue = conn.read_reply();
  const Reply head = conn.read_reply();
  const Reply length = conn.read_reply();
  const Reply exists = conn.read_reply();
  const Reply groups = conn.read_reply();
  expect_ok(pending, "ZCARD");
  expect_ok(overdue, "ZCOUNT");
  expect_ok(head, "ZRANGE");
  expect_ok(length, "XLEN");  // before EXISTS: without read access to the stream, XLEN is named
  expect_ok(exists, "EXISTS");
  // XINFO GROUPS of a missing stream is an error reply; it only counts when the stream exists.
  const bool stream_exists = exists.type == Reply::Type::Integer && exists.integer > 0;
  if (stream_exists) expect_ok(groups, "XINFO GROUPS");

  std::optional<long long> next_due;
  if (head.type == Reply::Type::Array && head.elements.size() == 2) next_due = score_to_ms(head.elements[1].str);
  std::optional<long long> next_due_in;
  if (next_due) next_due_in = *next_due - *now;
  const auto group = stream_exists ? find_group(groups, target.group) : std::nullopt;
  const std::optional<long long> lag = group ? group->lag : std::nullopt;
  const std::optional<long long> group_pending = group ? group->pending : std::nullopt;

  if (options.json) {
    const nlohmann::json out = {{"namespace", target.ns},
                                {"now_ms", *now},
                                {"pending", pending.integer},
                                {"overdue", overdue.integer},
                                {"next_due_ms", nullable(next_due)},
                                {"next_due_in_ms", nullable(next_due_in)},
                                {"stream", stream},
                                {"stream_exists", stream_exists},
                                {"stream_length", length.integer},
                                {"group", target.group},
                                {"group_exists", group.has_value()},
                                {"group_lag", nullable(lag)},
                                {"group_pending", nullable(group_pending)}};
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  std::cout << "namespace: " << target.ns << "\n"
            << "now_ms: " << *now << "\n"
            << "pending: " << pending.integer << "\n"
            << "overdue: " << overdue.integer << "\n"
            << "next_due_ms: " << text_of(next_due) << "\n"
            << "next_due_in_ms: " << text_of(next_due_in) << "\n"
            << "stream: " << escape_text(stream) << "\n"
            << "stream_exists: " << (stream_exists ? "true" : "false") << "\n"
            << "stream_length: " << length.integer << "\n"
            << "group: " << escape_text(target.group) << "\n"
            << "group_exists: " << (group ? "true" : "false") << "\n"
            << "group_lag: " << text_of(lag) << "\n"
            << "group_pending: " << text_of(group_pending) << "\n";
  if (!stream_exists) {
    std::cout.flush();
    std::cerr << "expiry-ctl: stream " << escape_text(stream)
              << " does not exist (yet): the relay creates it when it starts; check that one runs with this "
                 "stream (--stream, --namespace, --config, EXPIRY_RELAY_STREAM)\n";
  }
  return kExitOk;
}

}  // namespace expiry
