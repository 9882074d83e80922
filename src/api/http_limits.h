// The HTTP limits of one worker (http_worker.h), read from the settings (api_config.h). Pure.
#pragma once

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

}  // namespace expiry
