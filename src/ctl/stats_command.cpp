// stats: the schedule's size and head, and the stream and consumer group it feeds
// (Inspector::stats, formatted).
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/task_listing.h"
#include "inspector/inspector.h"

namespace expiry {
namespace {

nlohmann::json nullable(const std::optional<long long>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string text_of(const std::optional<long long>& v) { return v ? std::to_string(*v) : "null"; }

}  // namespace

int run_stats(const CtlTarget& target, const StatsOptions& options) {
  CtlSession session(target);
  const TaskPlacement& layout = session.layout;
  const std::vector<std::string> streams = layout.streams();
  const bool bucketed = layout.bucket_streams();
  const NamespaceStats st = Inspector(session.producer).stats(target.group);
  const long long now = st.now_ms;
  const long long pending = st.pending;
  const long long overdue = st.overdue;
  const std::optional<long long> next_due = st.next_due_ms;
  const bool pause_unknown = !st.pause_known;
  // Paused when any bucket is; until the latest end, or 0 when one is paused until resumed.
  const bool paused = !pause_unknown && st.paused_buckets > 0;
  const std::optional<long long> paused_until = paused ? st.paused_until : std::nullopt;
  const long long paused_buckets = st.paused_buckets;
  std::optional<long long> next_due_in;
  if (next_due) next_due_in = *next_due - now;
  const long long length = st.stream_length;
  const size_t streams_existing = st.streams_existing;
  const size_t groups_found = st.groups_found;
  const bool stream_exists = streams_existing > 0;
  const bool group_exists = groups_found > 0;
  const std::optional<long long> lag = st.group_lag;
  const std::optional<long long> pending_in_group = st.group_pending;
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
                          {"paused_buckets", paused_buckets},
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
    std::cout << " (" << paused_buckets << " of " << layout.buckets << " bucket"
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
