// ChildProcess: a directly exec'd (no shell) child program, started and stopped by its pid
// (never by name), with its resource use read from /proc. Used by the benchmark and the tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace expiry {

struct ProcessUsage {
  double cpu_seconds = 0;  // user + system
  double peak_rss_mb = 0;  // VmHWM, MiB
};

// CPU seconds (user + system, from /proc/<pid>/stat) that process `pid` has used so far; 0 for
// a pid <= 0 or a process that is gone. Throws Error if the stat line is malformed.
double process_cpu_seconds(pid_t pid);

// Owns one child process started with fork + execve.
//
// Contracts:
// - `path` is executed as given (no PATH lookup, no shell); the child's argv is
//   {path, args...}.
// - The child's environment is the parent's environment at construction time
//   plus `extra_env`, whose entries override variables of the same name.
// - stdin is /dev/null; stdout and stderr are both appended to `log_path`, or,
//   when `log_path` is empty, to a fresh temp file under /tmp that this object
//   owns and deletes in its destructor (read it with output() before then).
// - The child starts with all signals unblocked and at their default
//   disposition, and inherits no file descriptors other than 0, 1 and 2.
// - The child gets SIGTERM if the thread that started it dies first (PR_SET_PDEATHSIG), so
//   nothing outlives a crashed bench or test binary.
// - Only this object's own pid is ever signalled (never a process group), and
//   never after it has been reaped, so pid reuse cannot hit another process.
// - Exit statuses are reported as the exit code when the child exited, or
//   128 + signal number when it was killed by a signal.
// - Not thread-safe: use one object from one thread at a time.
class ChildProcess {
 public:
  // Starts the child immediately. Throws Error if the log file cannot be opened, fork fails,
  // or execve fails in the child (the child is reaped before the exception is thrown).
  ChildProcess(std::string path, std::vector<std::string> args,
               std::vector<std::pair<std::string, std::string>> extra_env = {}, std::string log_path = "");
  // The same with argv[0] as the path (throws Error for an empty argv).
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);

  // SIGKILLs and reaps the child if it has not been reaped yet; deletes the
  // log file only if this object created it.
  ~ChildProcess();

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&&) = delete;
  ChildProcess& operator=(ChildProcess&&) = delete;

  // The child's pid; stays valid for reporting after the child is reaped.
  pid_t pid() const { return pid_; }

  // Non-blocking: reaps the child if it has exited; true while it has not.
  bool running();

  // Sends SIGTERM, waits up to `grace` for exit, then SIGKILLs and reaps.
  // Returns the exit status; if the child had already exited, just returns it.
  int terminate(std::chrono::milliseconds grace = std::chrono::seconds(5));

  // SIGKILLs (if not yet reaped) and reaps the child.
  void kill_hard();

  // Sends `sig` without waiting. Returns false, sending nothing, if the child has exited.
  bool send_signal(int sig);

  // Waits up to `deadline` for the child to exit on its own, without sending
  // any signal. Returns its exit status, or nullopt if it is still running.
  std::optional<int> wait_exit(std::chrono::milliseconds deadline);
  // Waits, without a deadline, for the child to exit on its own; returns its exit status.
  int wait();

  // CPU and peak memory so far; only while the child has not been reaped (zeros otherwise).
  ProcessUsage usage() const;

  // The whole current content of the log file (including anything that was
  // already in a caller-supplied log file before the child started).
  std::string output() const;

  // Path of the file receiving the child's stdout and stderr.
  const std::string& log_path() const { return log_path_; }

 private:
  // Non-blocking reap; returns true if the child has been reaped (now or before).
  bool try_reap();
  // Blocking reap.
  void reap_blocking();
  void record_status(int wait_status);

  std::string path_;
  std::string log_path_;
  bool owns_log_ = false;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;  // set once the child has been reaped
};

}  // namespace expiry
