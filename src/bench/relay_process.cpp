// See relay_process.h.
#include "bench/relay_process.h"

#include <thread>

#include "base/errors.h"

namespace expiry::bench {

const char* role_name(RelayRole role) {
  switch (role) {
    case RelayRole::Relay:
      return "relay";
    case RelayRole::EventsOnly:
      return "events-only";
    case RelayRole::FixedPoll:
      return "fixed-poll";
  }
  return "?";
}

std::vector<std::string> relay_role_flags(RelayRole role) {
  switch (role) {
    case RelayRole::Relay:
      return {};
    case RelayRole::EventsOnly:
      return {"--next-due-timer=false", "--sweep-interval-ms", "3600000"};
    case RelayRole::FixedPoll:
      return {"--next-due-timer=false", "--event-claims=false", "--sweep-interval-ms", "1000"};
  }
  return {};
}

namespace {

std::vector<std::string> relay_argv(const BenchContext& ctx, RelayRole role, const std::string& instance) {
  std::vector<std::string> argv = {ctx.relay_bin,     "--redis-url", ctx.redis_url, "--namespace", ctx.keys.ns(),
                                   "--stream",        ctx.stream,    "--group",     ctx.group,     "--instance",
                                   instance,          "--log-level", "warn"};
  argv.insert(argv.end(), ctx.tls_flags.begin(), ctx.tls_flags.end());
  for (auto& f : relay_role_flags(role)) argv.push_back(f);
  if (role == RelayRole::Relay) argv.insert(argv.end(), ctx.relay_extra_flags.begin(), ctx.relay_extra_flags.end());
  return argv;
}

}  // namespace

RelayProcess::RelayProcess(const BenchContext& ctx, RelayRole role, const std::string& instance)
    : role_(role),
      instance_(instance),
      log_path_(ctx.work_dir + "/" + instance + ".log"),
      health_channel_(ctx.keys.health_channel(instance)),
      child_(relay_argv(ctx, role, instance), log_path_) {}

RelayProcess::~RelayProcess() {
  try {
    child_.terminate();
  } catch (...) {  // failed, ignored: nothing more can be done from a destructor
  }
}

void RelayProcess::wait_ready(SyncConnection& conn, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const std::string cmd_name = "name=expiry-relay-cmd-" + instance_ + " ";
  while (std::chrono::steady_clock::now() < deadline) {
    if (!child_.running()) throw Error("expiry-relay " + instance_ + " exited; see " + log_path_);
    const Reply clients = conn.checked({"CLIENT", "LIST"});
    const Reply numsub = conn.checked({"PUBSUB", "NUMSUB", health_channel_});
    const bool commands_up = clients.str.find(cmd_name) != std::string::npos;
    const bool subscribed = numsub.elements.size() == 2 && numsub.elements[1].integer > 0;
    if (commands_up && subscribed) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw Error("expiry-relay " + instance_ + " not ready within " + std::to_string(timeout.count()) + " ms; see " +
              log_path_);
}

}  // namespace expiry::bench
