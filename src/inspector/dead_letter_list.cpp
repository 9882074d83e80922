// See dead_letter_list.h.
#include "inspector/dead_letter_list.h"

#include <algorithm>

#include "base/errors.h"
#include "functions/stream_entry.h"
#include "inspector/entry_format.h"
#include "io/sync/stream_scan.h"
#include "redis/redis_values.h"

namespace expiry {

DeadLetterList list_dead_letter_summaries(RoutedClient& redis, const std::vector<DeadStream>& streams,
                                          long long limit) {
  std::vector<StreamRange> ranges;
  for (const DeadStream& s : streams) ranges.push_back({s.slot, s.key, false, "-", "+", limit + 1});  // +1: more?
  const auto scanned = scan_streams(redis, ranges,
                                    {kDeadListScanBytes, 256u << 10,
                                     {entry_field::kId, entry_field::kReason, entry_field::kDeliveries,
                                      entry_field::kOriginalStream, entry_field::kOriginalId}});
  DeadLetterList out;
  // A stream cut short by the byte cap has unread entries newer than its last one read: only the
  // entries up to the earliest such cut are listed, so none is skipped.
  std::optional<std::string> cut;
  for (size_t s = 0; s < streams.size(); ++s) {
    if (scanned[s].error) throw ReplyError("XRANGE " + streams[s].key + ": " + scanned[s].error->str);
    const auto& read = scanned[s].entries;
    if (!scanned[s].complete && static_cast<long long>(read.size()) <= limit) {
      const std::string last = read.empty() ? "0-0" : read.back().id;
      if (!cut || entry_id_before(last, *cut)) cut = last;
    }
    for (const ScannedEntry& e : scanned[s].entries) {
      out.entries.push_back({{s, e.id},
                             e.field(entry_field::kId),
                             e.field(entry_field::kReason),
                             e.field(entry_field::kDeliveries),
                             e.field(entry_field::kOriginalStream),
                             e.field(entry_field::kOriginalId)});
    }
  }
  std::stable_sort(out.entries.begin(), out.entries.end(), [](const DeadLetterSummary& a, const DeadLetterSummary& b) {
    return entry_id_before(a.ref.entry_id, b.ref.entry_id);
  });
  if (cut) {
    out.more = true;
    out.entries.erase(std::find_if(out.entries.begin(), out.entries.end(),
                                   [&](const DeadLetterSummary& e) { return entry_id_before(*cut, e.ref.entry_id); }),
                      out.entries.end());
  }
  if (out.entries.size() > static_cast<size_t>(limit)) {
    out.entries.resize(static_cast<size_t>(limit));
    out.more = true;
  }
  return out;
}

}  // namespace expiry
