// See metrics.h.
#include "service/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>

namespace expiry {

// Families whose values are read from plain counters when scraped.
class Metrics::ReadAtScrape : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> out;
    out.reserve(families_.size());
    for (const auto& f : families_) {
      prometheus::MetricFamily family;
      family.name = f.name;
      family.help = f.help;
      family.type = f.kind == Kind::Counter ? prometheus::MetricType::Counter : prometheus::MetricType::Gauge;
      for (const auto& s : f.series) {
        prometheus::ClientMetric m;
        for (const auto& [k, v] : s.labels) m.label.push_back({k, v});
        const double value = s.value();
        if (f.kind == Kind::Counter) {
          m.counter.value = value;
        } else {
          m.gauge.value = value;
        }
        family.metric.push_back(std::move(m));
      }
      out.push_back(std::move(family));
    }
    return out;
  }
  std::vector<Family> families_;
};

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()), read_at_scrape_(std::make_shared<ReadAtScrape>()) {}

Metrics::~Metrics() = default;

void Metrics::add(Family family) { read_at_scrape_->families_.push_back(std::move(family)); }

prometheus::Histogram& Metrics::histogram(const std::string& name, const std::string& help,
                                          std::vector<double> bounds) {
  auto& family = prometheus::BuildHistogram().Name(name).Help(help).Register(*registry_);
  return family.Add({}, prometheus::Histogram::BucketBoundaries(std::move(bounds)));
}

std::string Metrics::render() const {
  auto families = registry_->Collect();
  auto own = read_at_scrape_->Collect();
  families.insert(families.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
  std::sort(families.begin(), families.end(),
            [](const prometheus::MetricFamily& a, const prometheus::MetricFamily& b) { return a.name < b.name; });
  return prometheus::TextSerializer().Serialize(families);
}

void observe(prometheus::Histogram& histogram, double value) { histogram.Observe(value); }

std::vector<double> lateness_buckets_seconds() {
  return {0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}

}  // namespace expiry
