// Runs expiry-ctl (EXPIRY_CTL_BIN) as a program for the ctl tests, single Redis or cluster.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "io/process/child_process.h"

namespace expiry::test {

struct CtlRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr interleaved
};

// Runs expiry-ctl to completion (bounded by `deadline`) and returns its exit code and output.
inline CtlRun run_ctl(const std::vector<std::string>& args,
                      std::vector<std::pair<std::string, std::string>> env = {},
                      std::chrono::seconds deadline = std::chrono::seconds(120)) {
  ChildProcess child(EXPIRY_CTL_BIN, args, std::move(env));
  auto rc = child.wait_exit(deadline);
  CtlRun run;
  if (!rc) {
    child.kill_hard();
    ADD_FAILURE() << "expiry-ctl did not exit within " << deadline.count() << " s: " << child.output();
    return run;
  }
  run.exit_code = *rc;
  run.output = child.output();
  return run;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace expiry::test
