// SIGINT and SIGTERM as a request to stop, for a command that must first finish what it has
// started (schedule --file waits for the replies of the tasks it has sent).
#pragma once

#include <csignal>

namespace expiry {

// While an object lives, SIGINT and SIGTERM are blocked (so they interrupt no system call and
// cannot kill the process between a send and its reply) and poll() reports them. A signal the
// process ignores (e.g. SIGINT of a background job started by a shell) stays ignored.
// One object at a time, in a single-threaded program.
class StopSignals {
 public:
  StopSignals();
  // Consumes the stop signals still pending, then restores the previous signal mask.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first SIGINT or SIGTERM received since construction, or 0. Never blocks.
  int poll();

 private:
  sigset_t watched_;   // SIGINT and SIGTERM, unless ignored at construction
  sigset_t previous_;  // the mask before construction
  int received_ = 0;   // the first signal polled
};

// "SIGINT", "SIGTERM", or "a signal" for any other.
const char* signal_name(int sig);

}  // namespace expiry
