// An expiry-relay the bench runs as the system under test or as a baseline: the relay itself,
// the events-only listener, or the fixed-poll sweeper (the same binary with other flags).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_context.h"
#include "harness/child_process.h"
#include "io/sync/sync_connection.h"

namespace expiry::bench {

enum class RelayRole {
  Relay,       // defaults: next-due timer, event claims, 10 s sweep cap
  EventsOnly,  // --next-due-timer=false --sweep-interval-ms 3600000: expired events (+ startup sweep)
  FixedPoll,   // --next-due-timer=false --event-claims=false --sweep-interval-ms 1000
};

const char* role_name(RelayRole role);  // "relay", "events-only", "fixed-poll"
std::vector<std::string> relay_role_flags(RelayRole role);

class RelayProcess {
 public:
  // Starts the relay; its log goes to <work_dir>/<instance>.log. `instance` names its clients.
  RelayProcess(const BenchContext& ctx, RelayRole role, const std::string& instance);
  // Stops the relay gracefully if it still runs (SIGTERM, then SIGKILL after 5 s).
  ~RelayProcess();
  RelayProcess(const RelayProcess&) = delete;
  RelayProcess& operator=(const RelayProcess&) = delete;

  // Waits until both of its connections are up and subscribed (CLIENT LIST, PUBSUB NUMSUB).
  // Throws Error on timeout or if the relay exits.
  void wait_ready(SyncConnection& conn, std::chrono::milliseconds timeout = std::chrono::milliseconds(10000));
  ProcessUsage usage() const { return child_.usage(); }
  // SIGTERM and wait; returns the exit code (0 after a graceful stop).
  int stop() { return child_.terminate(); }
  pid_t pid() const { return child_.pid(); }
  bool running() { return child_.running(); }
  // Its --instance (on a cluster each node Relay is "<instance>@host:port").
  const std::string& instance() const { return instance_; }
  const std::string& log_path() const { return log_path_; }
  RelayRole role() const { return role_; }

 private:
  RelayRole role_;
  std::string instance_;
  std::string log_path_;
  std::string health_channel_;
  ChildProcess child_;
};

}  // namespace expiry::bench
