// Stop signals held back and polled; see stop_signals.h.
#include "ctl/stop_signals.h"

#include <ctime>
#include <initializer_list>

namespace expiry {
namespace {

bool ignored(int sig) {
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

}  // namespace

StopSignals::StopSignals() {
  sigemptyset(&watched_);
  for (int sig : {SIGINT, SIGTERM}) {
    if (!ignored(sig)) sigaddset(&watched_, sig);
  }
  sigprocmask(SIG_BLOCK, &watched_, &previous_);
}

StopSignals::~StopSignals() {
  const timespec now{0, 0};
  while (sigtimedwait(&watched_, nullptr, &now) > 0) {
  }
  sigprocmask(SIG_SETMASK, &previous_, nullptr);
}

int StopSignals::poll() {
  if (received_ == 0) {
    const timespec now{0, 0};
    const int sig = sigtimedwait(&watched_, nullptr, &now);  // -1 (EAGAIN) when none is pending
    if (sig > 0) received_ = sig;
  }
  return received_;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

}  // namespace expiry
