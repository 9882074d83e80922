// See service_process.h.
#include "service/service_process.h"

#include <csignal>
#include <iostream>

#include "base/errors.h"
#include "base/text_escape.h"
#include "service/fd_limit.h"

namespace expiry {
namespace {

// Every descriptor the hard limit allows, so that Redis reconnects never run short (HTTP
// clients are capped well below the limit: see HttpEndpoint::kReservedFds).
long long prepare_process() {
  std::signal(SIGPIPE, SIG_IGN);
  return raise_fd_limit();
}

}  // namespace

ServiceProcess::ServiceProcess(std::string program) : program_(std::move(program)), fd_limit_(prepare_process()) {}

ServiceProcess::~ServiceProcess() = default;

void ServiceProcess::on_stop_signal(std::function<void()> stop) {
  loop_.on_signal(SIGTERM, stop);
  loop_.on_signal(SIGINT, std::move(stop));
}

bool ServiceProcess::serve_http(const std::string& bind, int port, HttpEndpoint::RenderMetrics render,
                                HttpEndpoint::CheckReady ready, HttpEndpoint::CheckReady healthy) {
  if (port <= 0) return true;
  try {
    http_ = std::make_unique<HttpEndpoint>(loop_, bind, port, std::move(render), std::move(ready));
    if (healthy) http_->set_health_check(std::move(healthy));
  } catch (const Error& e) {
    std::cerr << program_ << ": " << escape_text(e.what()) << "\n";
    return false;
  }
  return true;
}

void ServiceProcess::run() {
  loop_.run();
  http_.reset();
}

}  // namespace expiry
