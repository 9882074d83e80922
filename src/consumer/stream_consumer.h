// A reusable consumer-group worker: XREADGROUP in batches on its own connection, a handler per
// entry, XACK only after the handler reports its effect committed, XPENDING/XCLAIM of entries
// idle too long (crashed consumers), and dead-lettering after max_deliveries. An entry its
// handler failed is acknowledged and its task scheduled again after an exponential delay, with
// attempt + 1 (expiry_retry), until its attempt max_deliveries, which is dead-lettered.
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
#include "consumer/entry_handler.h"  // HandleOutcome, EntryDone, ConsumerStats
#include "consumer/group_commands.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "io/redis_connection.h"
#include "protocol/stream_entry.h"  // StreamEntry, parse_stream_entries
#include "protocol/write_readiness.h"

namespace expiry {

class StreamConsumer {
 public:
  // `done` must be called exactly once per entry, from the loop.
  using Done = EntryDone;
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
  // Ready means "can consume": both connections up, the group there, and the node takes the
  // group's reads (XREADGROUP is a write: a replica refuses it with READONLY; WriteReadiness).
  bool ready(std::string& why) const;
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
  void on_dead_lettered(const std::string& entry_id, const Reply& r);
  void settle(const StreamEntry& entry, HandleOutcome outcome, const std::string& reason);
  void read_task_buckets();
  void retry_later(const StreamEntry& entry, const std::string& reason);
  void maybe_finish_stop();

  EventLoop& loop_;
  const ConsumerConfig& config_;
  Handler handler_;
  const GroupStream names_;         // stream, dead stream, group and consumer of config_
  ConsumerStats stats_;
  bool group_ready_ = false;
  WriteReadiness reads_;           // the group's reads succeed (ready())
  bool group_create_in_flight_ = false;
  bool read_in_flight_ = false;
  bool reclaim_in_flight_ = false;
  size_t unsettled_ = 0;           // entries handed to the handler and not yet acked/released
  bool stopping_ = false;
  std::function<void()> on_stopped_;
  std::function<void()> on_commands_ready_;
  std::function<void(const std::string&)> on_fatal_;
  bool ever_ready_ = false;        // the group existed (or was created) once: a later NOGROUP means it was destroyed
  int task_buckets_ = 0;           // the namespace's bucket count (NS:buckets); 0 until known
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
