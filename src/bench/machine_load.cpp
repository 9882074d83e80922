// See machine_load.h.
#include "bench/machine_load.h"

#include "harness/child_process.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace expiry::bench {

namespace {

double ticks_per_second() { return static_cast<double>(sysconf(_SC_CLK_TCK)); }

double machine_busy_seconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + system + irq + softirq + steal) / ticks_per_second();
}

}  // namespace

CpuSnapshot cpu_snapshot(const std::vector<pid_t>& own) {
  CpuSnapshot s;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  s.machine_busy_s = machine_busy_seconds();
  s.own_s = process_cpu_seconds(getpid());
  for (pid_t pid : own) s.own_s += process_cpu_seconds(pid);
  rusage children{};  // children already reaped (expiry-ctl, relays of earlier runs)
  if (getrusage(RUSAGE_CHILDREN, &children) == 0) {
    s.own_s += static_cast<double>(children.ru_utime.tv_sec + children.ru_stime.tv_sec) +
               static_cast<double>(children.ru_utime.tv_usec + children.ru_stime.tv_usec) / 1e6;
  }
  return s;
}

double foreign_cpu_percent(const CpuSnapshot& a, const CpuSnapshot& b) {
  const double wall = b.wall_s - a.wall_s;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (wall <= 0) return 0;
  const double foreign = (b.machine_busy_s - a.machine_busy_s) - (b.own_s - a.own_s);
  return std::max(0.0, 100.0 * foreign / (wall * cores));
}

}  // namespace expiry::bench
