// expiry-api's process: the shared listening socket, one HttpWorker per thread, and the
// graceful stop on SIGTERM / SIGINT (stop accepting, let open connections finish, exit 0).
#pragma once

#include "api/api_config.h"

namespace expiry {

// Binds, starts the workers and waits for SIGTERM or SIGINT (blocked in every thread and taken
// with sigwait by the calling thread, so no handler runs inside libevent). Returns the exit
// code: 0 after a stop signal, 2 when it cannot listen, 1 when a worker cannot start.
int run_api_server(const ApiConfig& config);

// A listening TCP socket (non-blocking, close-on-exec, SO_REUSEADDR) on host:port; throws
// ConfigError naming the address when it cannot be resolved or bound.
int listen_socket(const std::string& host, int port);

}  // namespace expiry
