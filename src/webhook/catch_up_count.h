// The start-up count of the stream's backlog by what happens to it. A group's first start reads
// its stream from the beginning (XGROUP CREATE ... 0), so every earlier entry is handed over; an
// entry without a `webhook` field goes to default_endpoint or, with none configured, is
// dead-lettered at once. CatchUpCount makes that visible: it counts the entries of the catch-up
// as the consumer hands them over (no read of its own: neither a scan nor a payload more in
// memory) and logs one line when the catch-up ends, with how many had no `webhook` field and
// what happened to them, how many named an unknown endpoint (dead-lettered) and how many a
// configured one. A restart with no backlog logs the same line with zeros.
//
// The catch-up ends at the first entry appended after start-up (its id's time is at or past the
// start, so every earlier one was read: reads go in id order), or once nothing was handed over
// for `quiet` while `idle` said nothing was held and the consumer could read (its reads found
// the stream drained). Entries handed over after that (a later reclaim) are not counted.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "functions/stream_entry.h"
#include "io/event_loop.h"
#include "webhook/webhook_config.h"

namespace expiry {

class CatchUpCount {
 public:
  // `idle`: nothing held and the consumer ready to read. `where`: how the line names the stream.
  // `start_ms`: start-up on the wall clock, compared with the entries' ids.
  CatchUpCount(EventLoop& loop, const WebhookConfig& hooks, std::string where, int64_t start_ms,
               std::chrono::milliseconds quiet, std::function<bool()> idle);
  CatchUpCount(const CatchUpCount&) = delete;
  CatchUpCount& operator=(const CatchUpCount&) = delete;

  // Once the consumer has started: starts watching for the end of the catch-up.
  void start();
  // Each entry the consumer hands over, before the dispatcher takes it.
  void note(const StreamEntry& entry);
  bool done() const { return done_; }

 private:
  void quiet_tick();
  void finish(const char* how);

  const WebhookConfig& hooks_;
  const std::string where_;
  const int64_t start_ms_;
  const std::chrono::milliseconds quiet_;
  std::function<bool()> idle_;
  bool done_ = false;
  uint64_t total_ = 0;
  uint64_t without_field_ = 0;  // no webhook field
  uint64_t unknown_ = 0;        // a webhook field naming no endpoint
  Timer quiet_timer_;
};

}  // namespace expiry
