// Inspector's plain reads of the default streams (expiry-ctl tail): whether one exists, the
// newest entry of each, and the entries after given ids; and the clock of a task's node.
#include <algorithm>

#include "base/errors.h"
#include "functions/stream_entry.h"
#include "inspector/entry_format.h"
#include "inspector/inspector.h"
#include "inspector/reply_reads.h"
#include "io/sync/routed_client.h"
#include "io/sync/sync_connection.h"
#include "producer/producer.h"
#include "producer/task_placement.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

using namespace inspector_reads;

// The id of the newest entry of an XREVRANGE ... COUNT 1 reply, or "0-0".
std::string newest_id_of(const Reply& r) {
  if (r.type == Reply::Type::Array && !r.elements.empty() && r.elements[0].type == Reply::Type::Array &&
      !r.elements[0].elements.empty()) {
    return r.elements[0].elements[0].str;
  }
  return "0-0";
}

// Appends the entries of an XREAD reply of stream `stream` to `out` (Nil: none).
void append_read(const Reply& r, size_t stream, std::vector<StreamArrival>& out) {
  if (r.type != Reply::Type::Array) return;
  for (const Reply& per_stream : r.elements) {
    if (per_stream.type != Reply::Type::Array || per_stream.elements.size() != 2) continue;
    for (StreamEntry& entry : parse_stream_entries(per_stream.elements[1])) out.push_back({stream, std::move(entry)});
  }
}

}  // namespace

std::optional<bool> Inspector::stream_exists(size_t stream) {
  const TaskPlacement& layout = producer_.placement();
  const Reply r = redis_.command({"EXISTS", layout.streams().at(stream)}, slot_of_stream(layout, stream));
  if (r.type != Reply::Type::Integer) return std::nullopt;
  return r.integer > 0;
}

std::vector<std::string> Inspector::newest_entry_ids() {
  const TaskPlacement& layout = producer_.placement();
  const std::vector<std::string> streams = layout.streams();
  if (!layout.bucket_streams()) return {newest_id_of(redis_.single().checked({"XREVRANGE", streams[0], "+", "-", "COUNT", "1"}))};
  std::vector<ClusterClient::Routed> reads;
  for (size_t s = 0; s < streams.size(); ++s) {
    reads.push_back({slot_of_stream(layout, s), {"XREVRANGE", streams[s], "+", "-", "COUNT", "1"}});
  }
  const std::vector<Reply> replies = redis_.batch(reads);
  std::vector<std::string> out;
  for (const Reply& r : replies) out.push_back(newest_id_of(expect_ok(r, "XREVRANGE")));
  return out;
}

std::vector<StreamArrival> Inspector::read_streams_after(const std::vector<std::string>& after, long long count,
                                                         long long block_ms) {
  const TaskPlacement& layout = producer_.placement();
  const std::vector<std::string> streams = layout.streams();
  if (after.size() != streams.size()) throw ConfigError("one id per default stream is needed");
  std::vector<StreamArrival> out;
  if (!layout.bucket_streams()) {
    append_read(redis_.single().checked({"XREAD", "COUNT", std::to_string(count), "BLOCK", std::to_string(block_ms),
                                         "STREAMS", streams[0], after[0]}),
                0, out);
    return out;
  }
  std::vector<ClusterClient::Routed> reads;
  for (size_t s = 0; s < streams.size(); ++s) {
    reads.push_back({slot_of_stream(layout, s), {"XREAD", "COUNT", std::to_string(count), "STREAMS", streams[s], after[s]}});
  }
  const std::vector<Reply> replies = redis_.batch(reads);
  for (size_t s = 0; s < streams.size(); ++s) append_read(expect_ok(replies[s], "XREAD"), s, out);
  std::stable_sort(out.begin(), out.end(), [](const StreamArrival& a, const StreamArrival& b) {
    return entry_id_before(a.entry.entry_id, b.entry.entry_id);
  });
  return out;
}

std::optional<long long> Inspector::clock_of_task(const std::string& id) {
  const Reply time = redis_.command({"TIME"}, producer_.placement().slot_of_task(id));
  if (time.failed()) return std::nullopt;
  return time_reply_ms(time);
}

}  // namespace expiry
