// A reusable consumer-group worker: XREADGROUP in batches on its own connection, a handler per
// entry, XACK only after the handler reports its effect committed, XPENDING/XCLAIM of entries
// idle too long (crashed consumers), and dead-lettering after max_deliveries.
// The group is created at 0 when the consumer first starts (everything already in the stream
// is handled). If it disappears later (XGROUP DESTROY: NOGROUP), it is created again at $, so
// entries handled or dead-lettered before are not handled again; this is logged as an error
// with the XGROUP SETID command that replays the rest, and counted (group_recreated).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "config/consumer_config.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "io/redis_connection.h"
#include "protocol/stream_entry.h"  // StreamEntry, parse_stream_entries

namespace expiry {

enum class HandleOutcome {
  Done,   // the effect is committed (or there is nothing to do): acknowledge
  Retry,  // not handled: stays pending, is reclaimed after min_idle, dead-lettered eventually
};

struct ConsumerStats {
  uint64_t read = 0;
  uint64_t acked = 0;
  uint64_t retried = 0;
  uint64_t reclaimed = 0;
  uint64_t dead_lettered = 0;
  uint64_t errors = 0;
  uint64_t group_recreated = 0;  // the group vanished after this consumer had it, and was created at $
};

class StreamConsumer {
 public:
  // `done` must be called exactly once per entry, from the loop.
  using Done = std::function<void(HandleOutcome, const std::string& reason)>;
  using Handler = std::function<void(const StreamEntry&, Done done)>;

  StreamConsumer(EventLoop& loop, const ConsumerConfig& config, Handler handler);
  StreamConsumer(const StreamConsumer&) = delete;
  StreamConsumer& operator=(const StreamConsumer&) = delete;

  // Called each time the command connection is ready (e.g. to load a handler's library).
  void set_on_commands_ready(std::function<void()> fn) { on_commands_ready_ = std::move(fn); }

  // Called when Redis refuses AUTH/SELECT before the consumer ever worked (a configuration
  // error: the caller should exit non-zero); later refusals are logged and retried.
  void set_on_fatal(std::function<void(const std::string&)> fn) { on_fatal_ = std::move(fn); }

  void start();
  // Stops reading; the current batch (and a read already under way) is handled and acked,
  // then both connections close and `done` runs.
  void stop(std::function<void()> done);

  // The command connection, for handlers that need Redis (same connection as the acks).
  RedisConnection& commands() { return commands_; }
  bool ready() const { return commands_.ready() && reader_.ready() && group_ready_; }
  const ConsumerStats& stats() const { return stats_; }

 private:
  void ensure_group();
  void on_group_missing(const char* command);
  void read_next();
  void on_read(const Reply& reply);
  void handle_batch(std::vector<StreamEntry> entries);
  void entry_settled();
  void reclaim_tick();
  void on_pending(const Reply& reply);
  void dead_letter(const std::string& entry_id, uint64_t deliveries);
  void maybe_finish_stop();

  EventLoop& loop_;
  const ConsumerConfig& config_;
  Handler handler_;
  ConsumerStats stats_;
  bool group_ready_ = false;
  bool group_create_in_flight_ = false;
  bool read_in_flight_ = false;
  bool reclaim_in_flight_ = false;
  size_t unsettled_ = 0;           // entries handed to the handler and not yet acked/released
  bool stopping_ = false;
  std::function<void()> on_stopped_;
  std::function<void()> on_commands_ready_;
  std::function<void(const std::string&)> on_fatal_;
  bool ever_ready_ = false;        // the group existed (or was created) once: a later NOGROUP means it was destroyed
  std::string last_read_id_;       // newest entry id XREADGROUP returned; empty before the first
  int closed_ = 0;
  Timer reclaim_timer_;
  Timer retry_timer_;              // re-reads after an error
  Timer group_retry_timer_;        // creates the group again after a refusal that may pass (LOADING ...)
  RedisConnection commands_;       // XACK, XPENDING, XCLAIM, handler scripts
  RedisConnection reader_;         // blocking XREADGROUP only
  FunctionCaller functions_;
};

}  // namespace expiry
