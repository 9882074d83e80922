// Rows of a service's metrics table (Metrics::Family) built from name, help and the value read
// at scrape time, so that a table holds one line of data per metric and no repeated shape.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "service/metrics.h"

namespace expiry {

// Reads `value` at every scrape; `value` must outlive the Metrics it is registered on.
template <typename Integer>
std::function<double()> read_at_scrape(const Integer& value) {
  return [&value] { return static_cast<double>(value); };
}

// A family with one unlabelled series.
inline Metrics::Family counter_family(std::string name, std::string help, std::function<double()> value) {
  return {Metrics::Kind::Counter, std::move(name), std::move(help), {{{}, std::move(value)}}};
}
inline Metrics::Family gauge_family(std::string name, std::string help, std::function<double()> value) {
  return {Metrics::Kind::Gauge, std::move(name), std::move(help), {{{}, std::move(value)}}};
}

// A family with one series per value of `label`: {label value, reading}.
inline Metrics::Family labelled_family(Metrics::Kind kind, std::string name, std::string help,
                                       const std::string& label,
                                       std::vector<std::pair<std::string, std::function<double()>>> series) {
  Metrics::Family family{kind, std::move(name), std::move(help), {}};
  for (auto& [value, read] : series) family.series.push_back({{{label, value}}, std::move(read)});
  return family;
}

}  // namespace expiry
