// The API's Prometheus metrics, shared by every worker thread (a mutex; one lock per request):
// requests by route, method and status, a latency histogram by route, the open connections,
// and the task calls pipelined on the async Redis connections. Rendered in the text exposition
// format 0.0.4. Pure.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace expiry {

class ApiMetrics {
 public:
  // Upper bounds of the latency histogram, in seconds (0.5 ms to 10 s).
  static const std::vector<double>& latency_bounds();

  void record(const std::string& route, const std::string& method, int status, double seconds);
  void connection_opened() { ++open_connections_; }
  void connection_closed() { --open_connections_; }
  long long open_connections() const { return open_connections_.load(); }
  void connection_refused() { ++connections_refused_; }
  // A task call sent on a worker's async Redis connection (pipelined), not the blocking Producer.
  void pipelined_call() { ++pipelined_calls_; }
  // A worker's async Redis connection became ready, or was lost after being ready.
  void async_connection_ready() { ++async_ready_; }
  void async_connection_lost() { --async_ready_; }

  std::string render() const;

 private:
  struct Latency {
    std::vector<long long> buckets;  // per bound, not cumulative
    long long count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, long long> requests_;
  std::map<std::string, Latency> latency_;
  std::atomic<long long> open_connections_{0};
  std::atomic<long long> connections_refused_{0};
  std::atomic<long long> pipelined_calls_{0};
  std::atomic<long long> async_ready_{0};
};

}  // namespace expiry
