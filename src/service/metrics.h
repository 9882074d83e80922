// Prometheus metrics of one process, on prometheus-cpp's core (registry + text serializer).
// Plain counters the hot path already keeps (RelayStats, ConsumerStats) are exported by reading
// them at scrape time; histograms are prometheus-cpp's own. Single-threaded: render() runs on
// the event loop, like everything that updates the values.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace prometheus {
class Histogram;
class Registry;
}  // namespace prometheus

namespace expiry {

class Metrics {
 public:
  enum class Kind { Counter, Gauge };
  using Labels = std::vector<std::pair<std::string, std::string>>;
  struct Series {
    Labels labels;
    std::function<double()> value;  // read at every scrape
  };
  // One row of a metrics table: a family and its series.
  struct Family {
    Kind kind;
    std::string name;
    std::string help;
    std::vector<Series> series;
  };

  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  void add(Family family);
  // A histogram owned by the registry; the reference lives as long as this object.
  prometheus::Histogram& histogram(const std::string& name, const std::string& help, std::vector<double> bounds);
  // Prometheus text exposition format 0.0.4.
  std::string render() const;

 private:
  class ReadAtScrape;
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<ReadAtScrape> read_at_scrape_;
};

// Adds one observation to a histogram from Metrics::histogram().
void observe(prometheus::Histogram& histogram, double value);

// Lateness buckets in seconds, 1 ms to 2 min.
std::vector<double> lateness_buckets_seconds();

}  // namespace expiry
