// A child process the bench starts and stops by its pid (never by name), with its resource use
// read from /proc/<pid>/stat (CPU seconds) and /proc/<pid>/status (VmHWM, the peak RSS).
// The child gets SIGTERM if the bench dies first (PR_SET_PDEATHSIG), so nothing outlives a run.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace expiry::bench {

struct ProcessUsage {
  double cpu_seconds = 0;  // user + system
  double peak_rss_mb = 0;  // VmHWM, MiB
};

class ChildProcess {
 public:
  // Starts argv[0] (a path) with stdout and stderr appended to `log_path`. Throws Error if fork or
  // exec fails (exec failure is noticed as an early exit with status 127).
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  // Stops the child if it still runs (SIGTERM, then SIGKILL after 5 s).
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Usage so far; only while the child has not been reaped (zeros otherwise).
  ProcessUsage usage() const;
  // Waits for the child to exit and returns its exit code (128 + signal if killed).
  int wait();
  // SIGTERM, then SIGKILL if it has not exited within `grace`; returns the exit code.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

 private:
  bool reap(bool block);

  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -1;
};

}  // namespace expiry::bench
