// See bench_context.h.
#include "bench/bench_context.h"

#include <thread>

namespace expiry::bench {

BenchSizes full_sizes() { return BenchSizes{}; }

BenchSizes quick_sizes() {
  BenchSizes s;
  s.steady_rate = 200;
  s.steady_seconds = 10;
  s.steady_backdrop = 100000;
  s.steady_ttl_keys = 20000;
  s.steady_grace_ms = 5000;
  s.burst_tasks = 20000;
  s.backlog_tasks = 50000;
  s.bulk_tasks = 100000;
  s.cancel_tasks = 20000;
  s.idle_seconds = 10;
  s.kill_tasks = 2000;
  s.kill_seconds = 4;
  s.cluster_rate = 500;
  s.cluster_seconds = 10;
  s.cluster_backdrop = 20000;
  s.cluster_grace_ms = 5000;
  s.cluster_burst_tasks = 20000;
  s.deadline_tasks = 20000;
  s.recur_schedules = 10000;
  s.recur_minutes = 1;
  return s;
}

std::string task_id(const std::string& prefix, size_t index) { return prefix + std::to_string(index); }

long long task_index(const std::string& prefix, const std::string& id) {
  if (id.size() <= prefix.size() || id.compare(0, prefix.size(), prefix) != 0) return -1;
  long long v = 0;
  for (size_t i = prefix.size(); i < id.size(); ++i) {
    const char c = id[i];
    if (c < '0' || c > '9' || v > (1LL << 40)) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string task_payload(const std::string& id, size_t bytes) {
  std::string p = "{\"order_id\":\"" + id + "\",\"action\":\"cancel-if-unpaid\",\"pad\":\"";
  const size_t tail = 2;  // "}
  if (bytes < p.size() + tail) bytes = p.size() + tail;
  p.append(bytes - p.size() - tail, 'x');
  p += "\"}";
  return p;
}

long long wall_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

long long wall_us() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

void sleep_until_wall_ms(long long at_ms) {
  for (;;) {
    const long long left_us = at_ms * 1000 - wall_us();
    if (left_us <= 0) return;
    if (left_us > 2000) {
      std::this_thread::sleep_for(std::chrono::microseconds(left_us - 1000));
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace expiry::bench
