// See lateness_stats.h.
#include "bench/lateness_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

namespace expiry::bench {

namespace {

// Nearest-rank percentile over observed (sorted) followed by `censored` infinite values.
double percentile(const std::vector<double>& sorted, size_t censored, double p) {
  const size_t n = sorted.size() + censored;
  if (n == 0) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  if (rank < 1) rank = 1;
  if (rank > sorted.size()) return std::numeric_limits<double>::infinity();
  return sorted[rank - 1];
}

}  // namespace

LatenessSummary summarize_lateness(std::vector<double> values, size_t censored, double censor_ms) {
  LatenessSummary s;
  std::sort(values.begin(), values.end());
  s.observed = values.size();
  s.censored = censored;
  s.censor_ms = censor_ms;
  s.p50 = percentile(values, censored, 50);
  s.p99 = percentile(values, censored, 99);
  s.p999 = percentile(values, censored, 99.9);
  s.max = censored > 0 ? std::numeric_limits<double>::infinity() : (values.empty() ? 0 : values.back());
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = values.empty() ? 0 : sum / static_cast<double>(values.size());
  return s;
}

std::string LatenessSummary::format(double v) const {
  char buf[64];
  if (std::isinf(v)) {
    std::snprintf(buf, sizeof buf, ">%.0f", censor_ms);
  } else if (v == std::floor(v) || std::fabs(v) >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  }
  return buf;
}

nlohmann::json LatenessSummary::to_json() const {
  auto value = [](double v) -> nlohmann::json {
    if (std::isinf(v)) return nullptr;  // censored: beyond censor_ms
    return v;
  };
  return {{"observed", observed}, {"censored", censored}, {"censor_ms", censor_ms}, {"p50", value(p50)},
          {"p99", value(p99)},    {"p999", value(p999)},  {"max", value(max)},      {"mean", mean}};
}

}  // namespace expiry::bench
