// See api_server.h.
#include "api/api_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "api/http_worker.h"
#include "base/errors.h"
#include "service/fd_limit.h"

namespace expiry {

int listen_socket(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  const std::string where = (host.empty() ? std::string("*") : host) + ":" + service;
  if (rc != 0) throw ConfigError("cannot resolve --listen " + where + ": " + gai_strerror(rc));
  std::string error = "no address";
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, SOMAXCONN) != 0) {
      error = std::strerror(errno);
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) throw ConfigError("cannot listen on " + where + ": " + error);
  return fd;
}

int run_api_server(const ApiConfig& config) {
  // Before any thread exists: every thread inherits the mask, and sigwait below takes the signals.
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const long long fd_limit = raise_fd_limit();
  // Every worker's connections must fit below the descriptor limit, or accept() fails for all.
  HttpLimits limits = config.limits;
  limits.max_connections = clamp_worker_connections(config.limits.max_connections, config.threads, fd_limit);
  if (limits.max_connections < config.limits.max_connections) {
    spdlog::warn("--threads {} x --max-connections {} does not fit the descriptor limit {}: each worker holds at "
                 "most {} connections (raise the limit, e.g. `ulimit -n`, for more)",
                 config.threads, config.limits.max_connections, fd_limit, limits.max_connections);
  }

  int listen_fd = -1;
  try {
    listen_fd = listen_socket(config.listen_host, config.listen_port);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 2;
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  char host[NI_MAXHOST] = "?";
  char port[NI_MAXSERV] = "?";
  getnameinfo(reinterpret_cast<sockaddr*>(&bound), bound_len, host, sizeof host, port, sizeof port,
              NI_NUMERICHOST | NI_NUMERICSERV);

  std::vector<std::unique_ptr<HttpWorker>> workers;
  ApiMetrics metrics;
  int exit_code = 0;
  try {
    for (int i = 0; i < config.threads; ++i) {
      workers.push_back(std::make_unique<HttpWorker>(i, listen_fd, config.target, config.service_options(), config.tokens,
                                                     metrics, limits, config.tls));
    }
    for (auto& w : workers) w->connect_redis();
  } catch (const AuthError& e) {
    spdlog::critical("{}", e.what());
    workers.clear();
    close(listen_fd);
    return 2;  // as a configuration error
  } catch (const std::exception& e) {
    spdlog::error("cannot start the workers: {}", e.what());
    workers.clear();
    close(listen_fd);
    return 1;
  }
  close(listen_fd);  // each worker listens on its own duplicate
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w->run(); });
  spdlog::info("listening on {}:{} ({}) with {} worker thread{}, {} token{}, descriptor limit {}", host, port,
               config.tls ? "HTTPS, TLS 1.2 or later" : "plain HTTP", config.threads,
               config.threads == 1 ? "" : "s", config.tokens.size(), config.tokens.size() == 1 ? "" : "s", fd_limit);
  if (const auto warning = tokens_file_mode_warning(config.tokens_file)) spdlog::warn("{}", *warning);
  if (const size_t elsewhere = config.tokens.count_for_other_namespaces(config.target.ns)) {
    spdlog::info("{} token{} of the tokens file {} for another namespace than '{}' and refused here", elsewhere,
                 elsewhere == 1 ? "" : "s", elsewhere == 1 ? "is" : "are", config.target.ns);
  }

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  spdlog::info("{}: no new connections; letting open ones finish (up to {} ms)", strsignal(signal_number),
               config.limits.stop_grace.count());
  for (auto& w : workers) w->request_stop();
  for (auto& t : threads) t.join();
  workers.clear();
  spdlog::info("stopped");
  return exit_code;
}

}  // namespace expiry
