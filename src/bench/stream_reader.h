// The bench's own stream reader: a thread that XREADs the output stream from the start and records,
// for every entry, the forwarded task it holds and the local arrival time. Arrival minus
// due cross-checks the relay's own fired_ms (same host: both clocks are CLOCK_REALTIME).
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/redis_url.h"
#include "functions/stream_entry.h"

namespace expiry::bench {

// One entry of the output stream as the reader received it.
struct ReceivedEntry {
  std::optional<ForwardedTask> task;  // nullopt: not a forwarded task's entry (decode_forwarded_task)
  long long arrival_us = 0;           // wall clock when the reader received it
};

class StreamReader {
 public:
  // Connects its own connection (throws IoError) and starts reading from the stream's beginning.
  StreamReader(const RedisEndpoint& redis, std::string stream);
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  size_t count() const { return count_.load(); }
  // Polls until count() >= n or `timeout_ms` passes; returns whether n was reached.
  bool wait_for(size_t n, long long timeout_ms) const;
  // Stops the thread and returns every entry read. Throws Error if the reader failed.
  std::vector<ReceivedEntry> finish();

 private:
  void run();

  RedisEndpoint redis_;
  std::string stream_;
  std::atomic<size_t> count_{0};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<ReceivedEntry> entries_;  // guarded by mutex_
  std::string error_;                 // guarded by mutex_
  std::thread thread_;
};

}  // namespace expiry::bench
