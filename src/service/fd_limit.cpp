// RLIMIT_NOFILE helpers; see fd_limit.h.
#include "service/fd_limit.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace expiry {

long long fd_soft_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
  return static_cast<long long>(limit.rlim_cur);
}

long long raise_fd_limit() {
  try {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
      spdlog::warn("cannot read the descriptor limit (RLIMIT_NOFILE): {}; left as it is", std::strerror(errno));
      return -1;
    }
    if (limit.rlim_cur != limit.rlim_max) {
      const rlim_t before = limit.rlim_cur;
      limit.rlim_cur = limit.rlim_max;
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
        spdlog::warn("cannot raise the descriptor limit from {} to {}: {}; left as it is", before, limit.rlim_max,
                     std::strerror(errno));
        return fd_soft_limit();
      }
    }
    const long long soft = fd_soft_limit();
    spdlog::info("descriptor limit (RLIMIT_NOFILE): {}", soft < 0 ? std::string("unlimited") : std::to_string(soft));
    return soft;
  } catch (...) {  // logging failed (out of memory): the limit itself is set or left alone
    return fd_soft_limit();
  }
}

}  // namespace expiry
