// See stream_reader.h.
#include "bench/stream_reader.h"

#include <chrono>

#include "base/errors.h"
#include "bench/bench_context.h"
#include "io/sync/sync_connection.h"

namespace expiry::bench {

namespace {

constexpr const char* kBlockMs = "100";
constexpr const char* kCount = "2000";

}  // namespace

StreamReader::StreamReader(const RedisEndpoint& redis, std::string stream)
    : redis_(redis), stream_(std::move(stream)) {
  thread_ = std::thread([this] { run(); });
}

StreamReader::~StreamReader() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

bool StreamReader::wait_for(size_t n, long long timeout_ms) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (count_.load() < n) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::vector<ReceivedEntry> StreamReader::finish() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.empty()) throw Error("stream reader: " + error_);
  return std::move(entries_);
}

void StreamReader::run() {
  try {
    SyncConnection conn(redis_);
    std::string last_id = "0-0";
    std::vector<ReceivedEntry> batch;
    while (!stop_) {
      const Reply r = conn.command({"XREAD", "COUNT", kCount, "BLOCK", kBlockMs, "STREAMS", stream_, last_id});
      const long long arrival = wall_us();
      if (r.failed()) throw Error("XREAD: " + r.str);
      if (r.type != Reply::Type::Array || r.elements.empty()) continue;  // timed out
      batch.clear();
      for (const StreamEntry& entry : parse_stream_entries(r.elements[0].elements.at(1))) {
        last_id = entry.entry_id;
        batch.push_back(ReceivedEntry{decode_forwarded_task(entry), arrival});
      }
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& e : batch) entries_.push_back(std::move(e));
      count_ = entries_.size();
    }
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = e.what();
  }
}

}  // namespace expiry::bench
