// See api_metrics.h.
#include "api/api_metrics.h"

#include <sstream>

namespace expiry {
namespace {

// A label value as the exposition format quotes it.
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

const std::vector<double>& ApiMetrics::latency_bounds() {
  static const std::vector<double> bounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return bounds;
}

void ApiMetrics::record(const std::string& route, const std::string& method, int status, double seconds) {
  const auto& bounds = latency_bounds();
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{route, method, status}];
  Latency& l = latency_[route];
  if (l.buckets.empty()) l.buckets.assign(bounds.size(), 0);
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (seconds <= bounds[i]) {
      ++l.buckets[i];
      break;
    }
  }
  ++l.count;
  l.sum += seconds;
}

std::string ApiMetrics::render() const {
  const auto& bounds = latency_bounds();
  std::ostringstream out;
  out << "# HELP expiry_api_requests_total HTTP requests answered, by route template, method and status.\n"
      << "# TYPE expiry_api_requests_total counter\n";
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, n] : requests_) {
    out << "expiry_api_requests_total{route=\"" << label(std::get<0>(key)) << "\",method=\"" << label(std::get<1>(key))
        << "\",status=\"" << std::get<2>(key) << "\"} " << n << "\n";
  }
  out << "# HELP expiry_api_request_duration_seconds Time from a whole request read to its answer, by route.\n"
      << "# TYPE expiry_api_request_duration_seconds histogram\n";
  for (const auto& [route, l] : latency_) {
    long long cumulative = 0;
    for (size_t i = 0; i < bounds.size(); ++i) {
      cumulative += l.buckets[i];
      out << "expiry_api_request_duration_seconds_bucket{route=\"" << label(route) << "\",le=\"" << bounds[i] << "\"} "
          << cumulative << "\n";
    }
    out << "expiry_api_request_duration_seconds_bucket{route=\"" << label(route) << "\",le=\"+Inf\"} " << l.count
        << "\n"
        << "expiry_api_request_duration_seconds_sum{route=\"" << label(route) << "\"} " << l.sum << "\n"
        << "expiry_api_request_duration_seconds_count{route=\"" << label(route) << "\"} " << l.count << "\n";
  }
  out << "# HELP expiry_api_open_connections Client connections open, over every worker thread.\n"
      << "# TYPE expiry_api_open_connections gauge\n"
      << "expiry_api_open_connections " << open_connections_.load() << "\n"
      << "# HELP expiry_api_connections_refused_total Connections closed at once because their worker was at "
         "its connection cap.\n"
      << "# TYPE expiry_api_connections_refused_total counter\n"
      << "expiry_api_connections_refused_total " << connections_refused_.load() << "\n"
      << "# HELP expiry_api_redis_pipelined_calls_total Task writes sent pipelined on the workers' async Redis "
         "connections (the others wait for their own blocking round trip).\n"
      << "# TYPE expiry_api_redis_pipelined_calls_total counter\n"
      << "expiry_api_redis_pipelined_calls_total " << pipelined_calls_.load() << "\n"
      << "# HELP expiry_api_redis_async_connections_ready Worker threads whose async Redis connection is ready: "
         "their task writes are pipelined (the others block on their own round trip until it is).\n"
      << "# TYPE expiry_api_redis_async_connections_ready gauge\n"
      << "expiry_api_redis_async_connections_ready " << async_ready_.load() << "\n";
  return out.str();
}

}  // namespace expiry
