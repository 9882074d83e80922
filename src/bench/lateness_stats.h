// Percentiles of a lateness sample (nearest rank), where some tasks may be censored: not
// forwarded by the deadline, so their lateness is only known to exceed it. Censored tasks rank
// above every observed value; a percentile that falls on one is reported as "> deadline".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace expiry::bench {

struct LatenessSummary {
  size_t observed = 0;
  size_t censored = 0;          // not forwarded within the deadline
  double censor_ms = 0;         // the deadline the censored tasks exceeded
  double p50 = 0, p99 = 0, p999 = 0, max = 0;  // ms; +infinity when the rank is censored
  double mean = 0;              // of the observed values

  // "3", "0.4", or ">10000" for a censored rank.
  std::string format(double v) const;
  nlohmann::json to_json() const;
};

// `values` in ms (any order).
LatenessSummary summarize_lateness(std::vector<double> values, size_t censored = 0, double censor_ms = 0);

}  // namespace expiry::bench
