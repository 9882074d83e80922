// ChildProcess implementation: fork/execve with a CLOEXEC pipe reporting exec failure, and the
// one reader of /proc/<pid>/stat CPU times.
#include "harness/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

#include "base/errors.h"
#include "base/integers.h"

extern char** environ;

namespace expiry {
namespace {

Error sys_error(const std::string& what, int err) { return Error(what + ": " + std::strerror(err)); }

// Calls reaped() every 5 ms until it returns true or `deadline` passes; returns its last answer.
template <class Reaped>
bool poll_until(Reaped reaped, std::chrono::milliseconds deadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    if (reaped()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

unsigned long long stat_field(std::string_view text, pid_t pid, const char* name) {
  const auto value = parse_uint64(text);
  if (!value)
    throw Error("malformed /proc/" + std::to_string(pid) + "/stat: " + name + " is '" + std::string(text) +
                "'");
  return *value;
}

// "VmHWM:\t   1234 kB" -> 1234; throws Error for anything else.
unsigned long long status_kb(const std::string& line, pid_t pid) {
  const auto first = line.find_first_not_of(" \t", line.find(':') + 1);
  const auto last = line.find(' ', first);
  const std::string_view digits = std::string_view(line).substr(first, last - first);
  const auto value = first == std::string::npos ? std::nullopt : parse_uint64(digits);
  if (!value) throw Error("malformed /proc/" + std::to_string(pid) + "/status line: " + line);
  return *value;
}

// Closes fds in [first, last] using only async-signal-safe calls.
void close_fd_range(int first, int last) {
  if (first > last) return;
#ifdef SYS_close_range
  if (syscall(SYS_close_range, static_cast<unsigned>(first), static_cast<unsigned>(last), 0u) == 0) return;
#endif
  for (int fd = first; fd <= last; ++fd) close(fd);
}

// Parent environment with `extra` applied (later entries win).
std::vector<std::string> build_env(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  for (const auto& [key, value] : extra) {
    const std::string prefix = key + "=";
    for (auto it = env.begin(); it != env.end();) {
      if (it->compare(0, prefix.size(), prefix) == 0)
        it = env.erase(it);
      else
        ++it;
    }
    env.push_back(prefix + value);
  }
  return env;
}

std::vector<char*> to_cstrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

}  // namespace

namespace {

// The child's log: `log_path` (appended to), or a new temp file whose path is stored in
// `log_path` and which the caller owns (`owns` set).
int open_log(std::string& log_path, bool& owns) {
  if (!log_path.empty()) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int err = errno;
      throw sys_error("ChildProcess: cannot open log file " + log_path, err);
    }
    return fd;
  }
  std::string tmpl = "/tmp/expiry-child-XXXXXX.log";
  const int fd = mkostemps(tmpl.data(), 4, O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw sys_error("ChildProcess: cannot create temp log file", err);
  }
  log_path = tmpl;
  owns = true;
  return fd;
}

// The highest descriptor the child closes before exec.
int highest_fd() {
  struct rlimit nofile {};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur < 1048576)
    return static_cast<int>(nofile.rlim_cur) - 1;
  return 65535;
}

// Everything the child needs, prepared before fork: after it the child may only make
// async-signal-safe calls (the parent can be multithreaded).
struct ExecPlan {
  const char* path;
  char* const* argv;
  char* const* envp;
  int stdin_fd, log_fd, error_fd, max_fd;
  pid_t parent;
};

// In the child: default signals, stdin from /dev/null, stdout and stderr to the log, every other
// descriptor closed, then execve. A failure writes errno to the error pipe and exits 127.
[[noreturn]] void exec_child(const ExecPlan& plan) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != plan.parent) _exit(1);  // the parent died between fork and prctl
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);  // fails harmlessly for KILL/STOP

  int wfd = plan.error_fd;
  if (wfd <= 2) wfd = fcntl(wfd, F_DUPFD_CLOEXEC, 3);  // keep the pipe clear of fds 0-2
  if (wfd < 0 || dup2(plan.stdin_fd, 0) < 0 || dup2(plan.log_fd, 1) < 0 || dup2(plan.log_fd, 2) < 0) {
    int err = errno;
    if (wfd >= 0) (void)!write(wfd, &err, sizeof err);
    _exit(127);
  }
  close_fd_range(3, wfd - 1);
  close_fd_range(wfd + 1, plan.max_fd);
  execve(plan.path, plan.argv, plan.envp);
  int err = errno;
  (void)!write(wfd, &err, sizeof err);
  _exit(127);
}

// In the parent: the child's errno from the error pipe, or 0 once exec closed it.
int exec_errno(int error_read_fd) {
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(error_read_fd, &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  return n > 0 ? child_errno : 0;
}

}  // namespace

ChildProcess::ChildProcess(std::string path, std::vector<std::string> args,
                           std::vector<std::pair<std::string, std::string>> extra_env, std::string log_path)
    : path_(std::move(path)), log_path_(std::move(log_path)) {
  Fd log_fd(open_log(log_path_, owns_log_));
  try {
    Fd null_fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (null_fd.get() < 0) {
      const int err = errno;
      throw sys_error("ChildProcess: cannot open /dev/null", err);
    }
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      const int err = errno;
      throw sys_error("ChildProcess: pipe2 failed", err);
    }
    Fd err_read(pipe_fds[0]);
    Fd err_write(pipe_fds[1]);

    std::vector<std::string> argv_strings{path_};
    for (auto& a : args) argv_strings.push_back(std::move(a));
    std::vector<std::string> env_strings = build_env(extra_env);
    const std::vector<char*> argv = to_cstrings(argv_strings);
    const std::vector<char*> envp = to_cstrings(env_strings);
    const ExecPlan plan{path_.c_str(), argv.data(),     envp.data(),  null_fd.get(),
                        log_fd.get(),  err_write.get(), highest_fd(), getpid()};

    const pid_t pid = fork();
    if (pid < 0) {
      const int err = errno;
      throw sys_error("ChildProcess: fork failed", err);
    }
    if (pid == 0) exec_child(plan);
    pid_ = pid;
    err_write.reset();
    if (const int err = exec_errno(err_read.get()); err != 0) {
      reap_blocking();
      throw sys_error("ChildProcess: cannot execute " + path_, err);
    }
  } catch (...) {
    if (owns_log_) unlink(log_path_.c_str());
    throw;
  }
}

namespace {
std::vector<std::string> args_of(const std::vector<std::string>& argv) {
  if (argv.empty()) throw Error("ChildProcess: empty argv");
  return std::vector<std::string>(argv.begin() + 1, argv.end());
}
}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path)
    : ChildProcess(argv.empty() ? std::string() : argv[0], args_of(argv), {}, log_path) {}

ChildProcess::~ChildProcess() {
  kill_hard();
  if (owns_log_) unlink(log_path_.c_str());
}

void ChildProcess::record_status(int wait_status) {
  if (WIFEXITED(wait_status))
    exit_status_ = WEXITSTATUS(wait_status);
  else if (WIFSIGNALED(wait_status))
    exit_status_ = 128 + WTERMSIG(wait_status);
  else
    exit_status_ = -1;
}

bool ChildProcess::try_reap() {
  if (exit_status_) return true;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    record_status(status);
    return true;
  }
  if (r < 0) {  // ECHILD: reaped elsewhere (e.g. SIGCHLD ignored); never signal it again
    exit_status_ = -1;
    return true;
  }
  return false;
}

void ChildProcess::reap_blocking() {
  if (exit_status_) return;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r == pid_)
    record_status(status);
  else
    exit_status_ = -1;
}

bool ChildProcess::running() { return !try_reap(); }

int ChildProcess::terminate(std::chrono::milliseconds grace) {
  if (try_reap()) return *exit_status_;
  ::kill(pid_, SIGTERM);
  if (!poll_until([this] { return try_reap(); }, grace)) {
    ::kill(pid_, SIGKILL);
    reap_blocking();
  }
  return *exit_status_;
}

bool ChildProcess::send_signal(int sig) {
  if (pid_ <= 0 || try_reap()) return false;
  return ::kill(pid_, sig) == 0;
}

void ChildProcess::kill_hard() {
  if (pid_ <= 0 || try_reap()) return;
  ::kill(pid_, SIGKILL);
  reap_blocking();
}

std::optional<int> ChildProcess::wait_exit(std::chrono::milliseconds deadline) {
  if (poll_until([this] { return try_reap(); }, deadline)) return exit_status_;
  return std::nullopt;
}

int ChildProcess::wait() {
  reap_blocking();
  return *exit_status_;
}

ProcessUsage ChildProcess::usage() const {
  ProcessUsage u;
  if (pid_ <= 0 || exit_status_) return u;
  u.cpu_seconds = process_cpu_seconds(pid_);
  std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) {
      u.peak_rss_mb = static_cast<double>(status_kb(line, pid_)) / 1024.0;
      break;
    }
  }
  return u;
}

double process_cpu_seconds(pid_t pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
  const auto close_paren = line.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream rest(line.substr(close_paren + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = stat_field(field, pid, "utime");
    if (i == 15) stime = stat_field(field, pid, "stime");
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string ChildProcess::output() const {
  std::ifstream in(log_path_, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace expiry
