// Runs redis-cli (redis_cli_binary()) as an independent TLS client for the TLS tests: what it accepts or
// refuses does not depend on the product's TLS code.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "harness/child_process.h"
#include "support/server_binaries.h"

namespace expiry::test {

struct CliRun {
  int exit_code = -1;  // -1: did not exit within the deadline (it was killed)
  std::string output;  // stdout and stderr interleaved
};

// Runs redis-cli with `args` to completion, bounded by `deadline`.
inline CliRun redis_cli(const std::vector<std::string>& args,
                        std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
  ChildProcess cli(redis_cli_binary(), args);
  CliRun run;
  if (auto rc = cli.wait_exit(deadline)) {
    run.exit_code = *rc;
  } else {
    cli.kill_hard();
  }
  run.output = cli.output();
  return run;
}

// redis-cli over TLS to 127.0.0.1:`port`, verifying with `ca_file` and presenting `cert`/`key`
// when they are not empty, running `command`.
inline CliRun redis_cli_tls(int port, const std::string& ca_file, const std::vector<std::string>& command,
                            const std::string& cert = "", const std::string& key = "") {
  std::vector<std::string> args = {"--tls", "--cacert", ca_file, "-h", "127.0.0.1", "-p", std::to_string(port)};
  if (!cert.empty()) args.insert(args.end(), {"--cert", cert, "--key", key});
  args.insert(args.end(), command.begin(), command.end());
  return redis_cli(args);
}

}  // namespace expiry::test
