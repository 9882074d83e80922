// How much of the machine other processes used during a run: busy CPU time of the whole machine
// (/proc/stat) minus that of the bench's own processes (the bench with its reader threads,
// redis-server, the relay under test). A run that shared its 2 cores with others is marked busy.
#pragma once

#include <sys/types.h>

#include <vector>

namespace expiry::bench {

constexpr double kBusyForeignPercent = 10;  // others used more than this share of all cores

struct CpuSnapshot {
  double machine_busy_s = 0;  // all cores, user + nice + system + irq + softirq + steal
  double own_s = 0;           // this process, its reaped children and the listed pids, user + system
  double wall_s = 0;          // monotonic clock
};

// Takes the snapshot. `own`: the bench's other processes (redis-server, a running relay); the
// bench itself and its reaped children are always counted. 0 or exited pids count as 0.
CpuSnapshot cpu_snapshot(const std::vector<pid_t>& own);
// CPU used by other processes between a and b, in percent of all cores. Take `b` while the listed
// processes still run; one started after `a` may be in b's list only.
double foreign_cpu_percent(const CpuSnapshot& a, const CpuSnapshot& b);

}  // namespace expiry::bench
