// See timeline_ranges.h.
#include "inspector/timeline_ranges.h"

#include <algorithm>
#include <cmath>

namespace expiry {

std::vector<std::pair<std::string, std::string>> timeline_bounds(long long now_ms, const TimelineRange& range) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(static_cast<size_t>(range.steps));
  for (int i = 0; i < range.steps; ++i) {
    out.emplace_back("(" + std::to_string(now_ms + i * range.step_ms), std::to_string(now_ms + (i + 1) * range.step_ms));
  }
  return out;
}

std::optional<long long> percentile(std::vector<long long> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::min(values.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace expiry
