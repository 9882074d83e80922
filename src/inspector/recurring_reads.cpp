// Inspector::recurring_schedules and Inspector::recurring_summaries (recurring_summary.h): the
// namespace's recurring schedules, whole or in brief.
#include "base/errors.h"
#include "functions/key_layout.h"
#include "functions/recur_calls.h"
#include "inspector/inspector.h"
#include "inspector/reply_reads.h"
#include "io/sync/routed_client.h"
#include "producer/producer.h"
#include "producer/task_placement.h"
#include "redis/redis_values.h"

namespace expiry {
namespace {

using namespace inspector_reads;

constexpr int kSummaryPage = 100;  // schedule ids per expiry_v2_recur_list call

RecurringSummary summary_of(const std::string& id, const std::map<std::string, std::string>& def) {
  const auto text = [&](const char* name) -> std::optional<std::string> {
    const auto it = def.find(name);
    if (it == def.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
  const auto number = [&](const char* name) -> std::optional<long long> {
    const auto t = text(name);
    return t ? to_integer(*t) : std::nullopt;
  };
  RecurringSummary out;
  out.id = id;
  out.rule = text("rule");
  out.tz = text("tz");
  out.misfire = text("misfire");
  out.paused = text("paused") == std::optional<std::string>("1");
  out.ended = text("ended") == std::optional<std::string>("1");
  out.next_ms = number("armed_ms");
  out.next_local = text("armed_local");
  out.last_ms = number("last_ms");
  out.fired = number("fired");
  out.skipped = number("skipped");
  return out;
}

}  // namespace

RecurringSchedules Inspector::recurring_schedules() { return RecurringSchedules(redis_, producer_.placement()); }

RecurringSummaries Inspector::recurring_summaries(long long limit) {
  const TaskPlacement& layout = producer_.placement();
  RecurringSummaries out;
  const auto full = [&] { return static_cast<long long>(out.schedules.size()) >= limit; };
  for (int b = 0; b < layout.buckets && !out.more; ++b) {
    const KeyLayout keys(layout.ns, b);
    const int slot = TaskPlacement::slot_of_bucket(b);
    std::string cursor = "0";
    do {
      const Reply reply = redis_.fcall(recur_list_argv(keys, cursor, kSummaryPage), slot);
      check(reply, "FCALL expiry_v2_recur_list");
      const auto page = decode_recur_list(reply);
      if (!page) throw ReplyError("unexpected reply to expiry_v2_recur_list: " + reply.describe());
      for (const std::string& id : page->ids) {
        if (full()) {
          out.more = true;
          break;
        }
        const Reply got = redis_.fcall(recur_get_argv(keys, id), slot);
        check(got, "FCALL expiry_v2_recur_get");
        const auto def = decode_recur_get(got);
        if (!def) throw ReplyError("unexpected reply to expiry_v2_recur_get: " + got.describe());
        if (def->empty()) continue;  // deleted meanwhile
        out.schedules.push_back(summary_of(id, *def));
      }
      cursor = page->cursor;
    } while (cursor != "0" && !out.more);
    if (full() && (cursor != "0" || b + 1 < layout.buckets)) out.more = true;
  }
  return out;
}

}  // namespace expiry
