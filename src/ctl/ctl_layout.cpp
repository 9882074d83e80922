// See ctl_layout.h.
#include "ctl/ctl_layout.h"

#include <optional>
#include <utility>

#include "protocol/bucket_plan.h"
#include "protocol/hash_slot.h"

namespace expiry {
namespace {

// (ms, seq) of an entry id, or nullopt when it is not one.
std::optional<std::pair<unsigned long long, unsigned long long>> parse_entry_id(std::string_view id) {
  auto number = [](std::string_view s) -> std::optional<unsigned long long> {
    if (s.empty() || s.size() > 20) return std::nullopt;
    unsigned long long v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return std::nullopt;
      const unsigned long long next = v * 10 + static_cast<unsigned long long>(c - '0');
      if (next / 10 != v) return std::nullopt;  // overflow
      v = next;
    }
    return v;
  };
  const auto dash = id.find('-');
  const auto ms = number(id.substr(0, dash));
  if (!ms) return std::nullopt;
  if (dash == std::string_view::npos) return std::make_pair(*ms, 0ULL);
  const auto seq = number(id.substr(dash + 1));
  if (!seq) return std::nullopt;
  return std::make_pair(*ms, *seq);
}

}  // namespace

bool CtlLayout::bucket_streams() const { return uses_bucket_streams(buckets, cluster); }

int CtlLayout::bucket_of_task(std::string_view id) const { return buckets <= 1 ? 0 : bucket_of(id, buckets); }

int CtlLayout::slot_of_bucket(int b) { return bucket_slot(b); }

std::string CtlLayout::default_stream_of_bucket(int b) const {
  return bucket_streams() ? KeyLayout(ns, b).bucket_stream() : stream;
}

std::vector<std::string> CtlLayout::streams() const {
  if (!bucket_streams()) return {stream};
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(buckets));
  for (int b = 0; b < buckets; ++b) out.push_back(KeyLayout(ns, b).bucket_stream());
  return out;
}

bool entry_id_before(std::string_view a, std::string_view b) {
  const auto pa = parse_entry_id(a);
  const auto pb = parse_entry_id(b);
  if (pa && pb) return *pa < *pb;
  if (pa != pb && (pa || pb)) return pa.has_value();
  return a < b;
}

std::string replica_shortfall_message(long long wanted, long long acknowledged, long long timeout_ms, bool cluster) {
  return "only " + std::to_string(acknowledged) + " of the " + std::to_string(wanted) + " replica" +
         (wanted == 1 ? "" : "s") + " asked for acknowledged the writes within " + std::to_string(timeout_ms) +
         " ms" + (cluster ? " (the fewest on any primary written to)" : "") +
         "; the tasks were written to the primary, but a crash of it before they reach a replica would lose them "
         "(docs/reliability.md)";
}

}  // namespace expiry
