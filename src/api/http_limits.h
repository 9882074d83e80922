// The HTTP limits of one worker (http_worker.h), read from the settings (api_config.h). Pure.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>

namespace expiry {

struct HttpLimits {
  size_t max_body_bytes = 1 << 20;             // larger bodies: 413
  size_t max_header_bytes = 16384;             // evhttp's own 400 beyond it
  int timeout_seconds = 30;                    // a connection idle (or a request stalled) this long is closed
  int request_deadline_seconds = 60;           // a request not received whole this long after its first byte: closed
  long long max_connections = 4096;            // per worker; one more is accepted and closed at once
  std::chrono::milliseconds stop_grace{5000};  // on stop: how long open connections may finish
  // Per worker: FCALLs pipelined on its async Redis connection and not yet answered; a request
  // beyond it is answered 503 at once. 0: no async connection, every request blocks.
  size_t max_inflight = 1024;
};

// Descriptors the process needs besides its HTTP connections: a share per worker (its listening
// socket, Redis connections, stop pipe, event loop) and some for the process itself.
constexpr long long kFdsPerWorker = 16;
constexpr long long kFdsReserved = 64;

// The connections each of `threads` workers may hold so that all of them fit below `fd_limit`
// (the soft RLIMIT_NOFILE; -1: unlimited): `wanted`, or less, but at least 1.
inline long long clamp_worker_connections(long long wanted, int threads, long long fd_limit) {
  if (fd_limit < 0 || threads < 1) return wanted;
  const long long budget = (fd_limit - kFdsReserved - kFdsPerWorker * threads) / threads;
  return std::max(1LL, std::min(wanted, budget));
}

}  // namespace expiry
