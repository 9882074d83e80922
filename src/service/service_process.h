// The run stage of a service's main, shaped like libevent's sample/hello-world.c: SIGPIPE
// ignored and the descriptor limit raised before the event loop exists; the service builds its
// components on loop(); SIGTERM and SIGINT start its graceful stop; an optional HTTP endpoint
// serves /metrics, /readyz and /healthz; run() dispatches and then closes the endpoint. The
// configuration stage before it is configure_service (config/service_options.h).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "io/event_loop.h"
#include "service/http_endpoint.h"

namespace expiry {

class ServiceProcess {
 public:
  static constexpr int kExitConfigError = 2;  // as for a configuration error

  explicit ServiceProcess(std::string program);
  ~ServiceProcess();
  ServiceProcess(const ServiceProcess&) = delete;
  ServiceProcess& operator=(const ServiceProcess&) = delete;

  EventLoop& loop() { return loop_; }
  // The soft descriptor limit in force after raising it.
  long long fd_limit() const { return fd_limit_; }

  // SIGTERM and SIGINT call `stop`, which drains and then calls loop().stop().
  void on_stop_signal(std::function<void()> stop);

  // Serves HTTP on bind:port when port > 0 (nothing for 0); `healthy` as set_health_check (none:
  // always healthy). False, after "<program>: <error>" on stderr, when it cannot listen: main
  // then returns kExitConfigError. The callbacks must outlive run().
  bool serve_http(const std::string& bind, int port, HttpEndpoint::RenderMetrics render,
                  HttpEndpoint::CheckReady ready, HttpEndpoint::CheckReady healthy = {});

  // Dispatches until the loop stops, then closes the HTTP endpoint.
  void run();

 private:
  std::string program_;
  long long fd_limit_;                  // raised (and SIGPIPE ignored) before loop_ exists
  EventLoop loop_;
  std::unique_ptr<HttpEndpoint> http_;  // declared after loop_: closed first
};

}  // namespace expiry
