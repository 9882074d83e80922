// See stream_scan.h.
#include "io/sync/stream_scan.h"

#include <algorithm>

#include "base/errors.h"
#include "io/sync/routed_client.h"

namespace expiry {
namespace {

// The size assumed of an entry before one is seen: the first page of a range is small.
constexpr size_t kFirstGuessBytes = 32u << 10;
constexpr long long kLongestPage = 1000;

struct RangeState {
  std::string start, end;
  size_t largest_entry = 0;  // of those read; 0: none yet
  bool done = false;
};

}  // namespace

std::optional<std::string> ScannedEntry::field(std::string_view name) const {
  for (const auto& [k, v] : fields) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::vector<ScannedRange> scan_streams(RoutedClient& redis, const std::vector<StreamRange>& ranges,
                                       const ScanBudget& budget) {
  std::vector<ScannedRange> out(ranges.size());
  std::vector<RangeState> state(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    state[i].start = ranges[i].start;
    state[i].end = ranges[i].end;
    state[i].done = ranges[i].max_entries <= 0;
  }
  const auto kept = [&](std::string_view name) {
    return budget.keep.empty() || std::find(budget.keep.begin(), budget.keep.end(), name) != budget.keep.end();
  };
  size_t read = 0;
  while (read < budget.max_bytes) {
    std::vector<size_t> active;
    for (size_t i = 0; i < ranges.size(); ++i) {
      if (!state[i].done) active.push_back(i);
    }
    if (active.empty()) break;
    const size_t share = std::max<size_t>(1, budget.page_bytes / active.size());
    std::vector<ClusterClient::Routed> pages;
    std::vector<long long> counts;
    for (size_t i : active) {
      const StreamRange& r = ranges[i];
      const long long left = r.max_entries - static_cast<long long>(out[i].entries.size());
      const size_t entry_bytes = state[i].largest_entry > 0 ? state[i].largest_entry : kFirstGuessBytes;
      const long long fit = static_cast<long long>(share / entry_bytes);
      const long long count = std::clamp<long long>(fit, 1, std::min(left, kLongestPage));
      counts.push_back(count);
      pages.push_back({r.slot, r.newest_first ? std::vector<std::string>{"XREVRANGE", r.key, state[i].end, state[i].start,
                                                                         "COUNT", std::to_string(count)}
                                              : std::vector<std::string>{"XRANGE", r.key, state[i].start, state[i].end,
                                                                         "COUNT", std::to_string(count)}});
    }
    const std::vector<Reply> replies = redis.batch(pages);
    for (size_t a = 0; a < active.size(); ++a) {
      const size_t i = active[a];
      const Reply& reply = replies[a];
      RangeState& s = state[i];
      if (reply.is_io_error()) throw IoError(ranges[i].key + ": " + reply.str);
      if (reply.failed() || reply.type != Reply::Type::Array) {
        out[i].error = reply;
        s.done = true;
        continue;
      }
      for (const Reply& e : reply.elements) {
        if (e.type != Reply::Type::Array || e.elements.size() != 2) {
          throw ReplyError(ranges[i].key + ": unexpected entry " + e.describe());
        }
        ScannedEntry entry{e.elements[0].str, {}};
        size_t bytes = entry.id.size();
        const Reply& fields = e.elements[1];
        for (size_t f = 0; f + 1 < fields.elements.size(); f += 2) {
          const std::string& name = fields.elements[f].str;
          const std::string& value = fields.elements[f + 1].str;
          bytes += name.size() + value.size();
          if (kept(name)) entry.fields.emplace_back(name, value);
        }
        read += bytes;
        s.largest_entry = std::max(s.largest_entry, bytes);
        (ranges[i].newest_first ? s.end : s.start) = "(" + entry.id;
        out[i].entries.push_back(std::move(entry));
      }
      if (static_cast<long long>(reply.elements.size()) < counts[a]) {
        out[i].complete = true;
        s.done = true;
      } else if (static_cast<long long>(out[i].entries.size()) >= ranges[i].max_entries) {
        s.done = true;
      }
    }
  }
  return out;
}

}  // namespace expiry
