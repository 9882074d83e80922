// Runs expiry-ctl (EXPIRY_CTL_BIN) as a program for the ctl tests, single Redis or cluster.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "harness/child_process.h"

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

// A private directory for one test's files (bulk files, configs), removed with the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& stem) : path_(::testing::TempDir() + stem + "_XXXXXX") {
    if (mkdtemp(path_.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << path_;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Writes `content` (any bytes) to `name` in the directory and returns the file's path.
  std::string write(const std::string& name, const std::string& content) const {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::binary);
    out << content;
    EXPECT_TRUE(out.good()) << file;
    return file;
  }

 private:
  std::string path_;
};

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace expiry::test
