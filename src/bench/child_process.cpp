// See child_process.h.
#include "bench/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "protocol/errors.h"

namespace expiry::bench {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) throw Error("ChildProcess: empty argv");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw Error("cannot open " + log_path);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) {
    close(log_fd);
    throw Error("fork failed for " + argv[0]);
  }
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the bench died between fork and prctl
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execv(args[0], args.data());
    _exit(127);
  }
  close(log_fd);
}

ChildProcess::~ChildProcess() {
  try {
    stop();
  } catch (...) {  // failed, ignored: nothing more can be done from a destructor
  }
}

bool ChildProcess::reap(bool block) {
  if (reaped_) return true;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, block ? 0 : WNOHANG);
  if (r == 0) return false;
  reaped_ = true;
  if (r < 0) {
    exit_code_ = -1;
  } else if (WIFEXITED(status)) {
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit_code_ = 128 + WTERMSIG(status);
  }
  return true;
}

bool ChildProcess::running() { return pid_ > 0 && !reap(false); }

ProcessUsage ChildProcess::usage() const {
  ProcessUsage u;
  if (pid_ <= 0 || reaped_) return u;
  const std::string dir = "/proc/" + std::to_string(pid_);
  std::ifstream stat(dir + "/stat");
  std::string line;
  if (std::getline(stat, line)) {
    // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
    const auto close_paren = line.rfind(')');
    if (close_paren != std::string::npos) {
      std::istringstream rest(line.substr(close_paren + 2));
      std::string field;
      unsigned long long utime = 0, stime = 0;
      for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
      }
      u.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    }
  }
  std::ifstream status(dir + "/status");
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      u.peak_rss_mb = std::stod(line.substr(6)) / 1024.0;  // reported in kB
      break;
    }
  }
  return u;
}

int ChildProcess::wait() {
  if (pid_ > 0) reap(true);
  return exit_code_;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0 || reap(false)) return exit_code_;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (reap(false)) return exit_code_;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid_, SIGKILL);
  reap(true);
  return exit_code_;
}

}  // namespace expiry::bench
