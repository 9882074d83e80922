// The pipelined transport of the blocking client: commands go out in windows of up to N, and
// with two windows in flight the next window is sent before the replies of the current one are
// read, so Redis never waits for this process. expiry-ctl's bulk schedule and the bench use it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "io/sync/sync_connection.h"
#include "redis/reply.h"

namespace expiry {

struct PipelineOptions {
  size_t window = 512;         // commands per window (0 counts as 1)
  size_t windows_in_flight = 2;  // windows sent and not yet read (0 counts as 1)
};

struct PipelineSteps {
  // Fills `argv` with the next command; false at the end of the input. Called only while a
  // window is being sent; may throw (the commands already appended stay unread).
  std::function<bool(std::vector<std::string>& argv)> next_command;
  // Receives the reply of command `index` (0-based, in the order sent), every one of them.
  std::function<void(size_t index, const Reply& reply)> on_reply;
  // Asked before each window is sent; false sends nothing more (the replies of what was sent
  // are still read). Empty: always true.
  std::function<bool()> may_send;
  // Called after the replies of each window have been read. Empty: nothing.
  std::function<void()> after_window;
};

// Runs the pipeline until the input ends (or may_send says stop) and every reply sent has been
// read; returns the number of commands sent. Throws what SyncConnection throws (IoError ...).
size_t run_pipeline(SyncConnection& conn, const PipelineOptions& options, const PipelineSteps& steps);

}  // namespace expiry
