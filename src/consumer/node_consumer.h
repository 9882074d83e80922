// NodeConsumer: a consumer-group member on one Redis node. Over a command connection to the node
// it reads the streams it serves (its lanes), hands each entry to the handler, acknowledges it
// once the handler says Done, schedules its task again after a backoff on Retry (expiry_retry,
// dead-lettered after the last attempt), dead-letters it at once on Reject, reclaims entries left
// idle longer than min_idle (crashed consumers: XPENDING + XCLAIM), and dead-letters entries
// delivered max_deliveries times (expiry_dead_letter).
//
// The same class serves a single Redis and one node of a cluster, the way Relay does:
// - a single Redis: one lane (the configured stream), read with a blocking XREADGROUP on a
//   reader connection of its own, so an entry is handed over as soon as it is appended;
// - a cluster node (ClusterConsumer runs one per primary): the bucket streams NS:{b}:stream of
//   the buckets the node owns, one XREADGROUP per stream (a multi-stream read is CROSSSLOT)
//   without BLOCK, only for the streams that are due (LaneSchedule): a stream is due when its
//   doorbell NS:{b}:ring rings (a claim that appended to it publishes there, on the node's
//   doorbell connection, src/lua/expiry/doorbell.lua), when its turn of the safety poll comes
//   (each stream once per config.safety_poll, spread over the period), after a read that filled
//   a batch or failed, and every stream once whenever the doorbell's subscriptions are confirmed.
//   While the doorbell is not subscribed (lost, not yet confirmed) every stream is read in
//   rounds, a round that read nothing waiting config.idle, as before the doorbell. A PUBLISH
//   probe from the command connection every safety_poll proves the subscription alive (no
//   subscriber, or the previous probe not back: the doorbell reconnects). So an idle node
//   costs (streams / safety_poll) reads per second, and a ring is read within a round trip.
//   Reclaims (XPENDING every reclaim_interval) likewise look only at warm streams while the
//   doorbell is up: those rung or read from within 3 min_idle + reclaim_interval (every stream is
//   warm at start); a cold stream gets its XPENDING with every other safety-poll read (once per
//   2 safety_poll), since nothing was appended to it that a consumer could have left pending.
//   Idle, a node with 21 streams then gets 0.7 XREADGROUP, 0.35 XPENDING and its connections'
//   keepalive PINGs per second.
//
// Contracts:
// - The group is created per stream (XGROUP CREATE ... 0 MKSTREAM; BUSYGROUP is fine). A group
//   that disappears after this consumer had it (XGROUP DESTROY: NOGROUP) is created again at $,
//   so nothing handled or dead-lettered is handled again; that is logged as an error with the
//   XGROUP SETID command that replays the rest, and counted (group_recreated). What a consumer
//   had is remembered across NodeConsumers (ConsumerShared), since a bucket moves between nodes.
// - Entries are handed over one batch at a time: the next read starts once every entry of the
//   batch is settled (with ConsumerShared::max_unsettled, as long as fewer are unsettled).
//   stop() lets what was read be handled (and acknowledged if possible).
// - An entry whose acknowledgement failed stays pending and is reclaimed later: handlers must be
//   idempotent. An entry the handler has not answered yet is never reclaimed (nor dead-lettered)
//   by its own consumer, however long it takes. Nothing is lost; an entry may be handled twice.
// - A retried task goes back to its bucket: the lane's, or on a lane without one (a single Redis)
//   the bucket of its id under the namespace's count (NS:buckets, read at each connect).
// - Errors after which a cluster's slot map may have changed (MOVED, ASK, TRYAGAIN, CLUSTERDOWN,
//   READONLY, MASTERDOWN, a lost connection) call ConsumerShared::on_cluster_change.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/consumer_config.h"
#include "consumer/entry_handler.h"
#include "consumer/group_commands.h"
#include "consumer/lane_schedule.h"
#include "functions/stream_entry.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "io/redis_connection.h"
#include "log/log_limiter.h"
#include "redis/write_readiness.h"

namespace expiry {

// One stream a NodeConsumer reads, and the bucket whose tasks it holds (nullopt: any bucket, as
// a single Redis's configured stream does).
struct ConsumerLane {
  GroupStream names;
  std::optional<int> bucket;
};

// Where a handler runs an entry: on the connection to the entry's node (the one the acks use),
// with the handler's Function library loaded there.
struct EntryContext {
  std::optional<int> bucket;  // the lane's bucket, if it has one
  RedisConnection& commands;
  FunctionCaller& library;  // ConsumerShared::handler_library (expiry_v1 when there is none)
};

// `done` must be called exactly once per entry, from the loop (dispatch_entry enforces it).
using EntryHandler = std::function<void(const StreamEntry&, const EntryContext&, EntryDone)>;

// What every NodeConsumer of one consumer shares: the handler, the counters, and what outlives a
// NodeConsumer (a bucket moves between nodes when a cluster's map changes).
struct ConsumerShared {
  struct LaneMemory {
    bool had_group = false;    // the group existed once: a later NOGROUP means it was destroyed
    std::string last_read_id;  // newest entry id read; empty before the first
  };

  const ConsumerConfig& config;
  EntryHandler handler;
  std::string handler_library;                      // Lua source the handler calls: loaded on every node; empty: none
  std::map<std::string, LaneMemory> memory;         // by stream
  ConsumerStats stats;                              // of every NodeConsumer
  std::function<void(const std::string&)> on_fatal; // AUTH/SELECT refused before any connection was ready
  std::function<void(const char* why)> on_cluster_change;  // a reply says the slot map may have moved
  bool any_ready = false;                           // some connection was ready once
  size_t max_unsettled = 0;  // 0: the next read waits until every entry read is settled; else reads go on
                             // while fewer entries than this are unsettled (a handler with its own queues)
};

class NodeConsumer {
 public:
  // `endpoint`: the node; `name`: how logs name it; `blocking`: a single lane read with BLOCK
  // on a reader connection of its own (a single Redis).
  NodeConsumer(EventLoop& loop, ConsumerShared& shared, RedisEndpoint endpoint, std::string name,
               std::vector<ConsumerLane> lanes, bool blocking);
  NodeConsumer(const NodeConsumer&) = delete;
  NodeConsumer& operator=(const NodeConsumer&) = delete;

  void start();
  // Stops reading; entries already read are handled (and acked if possible), then the
  // connections close and `done` runs from the loop (the owner may destroy the consumer later,
  // not from inside `done`).
  void stop(std::function<void()> done);

  const std::string& name() const { return name_; }
  const std::vector<ConsumerLane>& lanes() const { return lanes_; }
  // Ready means "can consume": the connections are up, every lane's group exists, and the node
  // takes the reads (XREADGROUP is a write: a replica refuses it with READONLY; WriteReadiness).
  bool ready(std::string& why) const;

 private:
  struct LaneState {
    bool group_ready = false;
    bool create_in_flight = false;
  };
  struct ReadEntry {
    size_t lane;
    StreamEntry entry;
  };

  void on_commands_ready();
  void read_task_buckets();
  void ensure_groups();
  void ensure_group(size_t lane);
  void on_group_missing(size_t lane, const char* command);
  void read_next();
  void on_read(size_t lane, const Reply& reply, int count);
  void round_finished();
  void handle(std::vector<ReadEntry> entries);
  void settle(size_t lane, const StreamEntry& entry, HandleOutcome outcome, const std::string& reason,
              EntryDone::RetryDelay delay);
  void keep_pending_uncounted(size_t lane, const StreamEntry& entry, const std::string& reason);
  void retry_later(size_t lane, const StreamEntry& entry, const std::string& reason, EntryDone::RetryDelay delay);
  void on_dead_lettered(size_t lane, const std::string& entry_id, const Reply& r);
  void entry_settled();
  void reclaim_tick();
  void on_pending(size_t lane, const Reply& reply);
  void reclaim_done();
  // Counts and logs a failed command (rate-limited); cluster errors and lost connections call
  // on_cluster_change.
  void command_failed(const char* command, size_t lane, const Reply& reply);
  void maybe_finish_stop();
  RedisConnection& reader() { return reader_ ? *reader_ : commands_; }
  // The doorbell (cluster only): subscriptions, rings, losses, the safety poll and its probe.
  void subscribe_rings();
  void on_ring(const Reply& msg);
  void doorbell_lost();
  void safety_tick();
  void probe_tick();
  void warm(size_t lane);
  // Whether the reclaim tick skips `lane`: a cluster node whose doorbell is up, the lane cold.
  bool reclaim_skips(size_t lane) const;
  void reclaim_lane(size_t lane);

  EventLoop& loop_;
  ConsumerShared& shared_;
  const std::string name_;
  const std::vector<ConsumerLane> lanes_;
  std::vector<LaneState> states_;   // by lane
  RedisConnection commands_;        // acks, reclaims, dead letters, retries, the handler's calls; the reads too without a reader
  std::unique_ptr<RedisConnection> reader_;  // blocking: the XREADGROUP BLOCK connection
  FunctionCaller expiry_;           // expiry_dead_letter, expiry_retry
  FunctionCaller library_;          // the handler's library
  WriteReadiness reads_;            // the reads succeed (ready())
  int task_buckets_ = 0;            // the namespace's bucket count, for lanes without a bucket; 0 until known
  size_t reads_left_ = 0;           // XREADGROUPs of the current round awaiting their reply
  bool round_failed_ = false;       // a read of the current round failed
  std::vector<ReadEntry> round_;    // entries of the current round
  size_t unsettled_ = 0;            // entries handed to the handler and not yet acked/released
  std::set<std::string> held_;      // ids of the entries handed to the handler that it has not answered
  size_t reclaims_left_ = 0;        // XPENDING/XCLAIM of the current reclaim round in flight
  bool stopping_ = false;
  bool closing_ = false;
  std::function<void()> on_stopped_;
  LogLimiter error_log_{std::chrono::seconds(1)};
  LogLimiter refused_log_{std::chrono::seconds(10)};     // handler calls Redis refused (else a line per entry)
  LogLimiter dead_letter_log_{std::chrono::seconds(1)};  // failed dead-letterings, retried every reclaim round
  Timer next_read_timer_;           // the next read after an empty (cluster) or failed round
  Timer reclaim_timer_;
  Timer group_retry_timer_;         // creates groups again after a refusal that may pass (LOADING ...)
  LaneSchedule due_;                // cluster: the lanes to read next
  std::vector<Clock::time_point> warm_until_;  // by lane: reclaimed every reclaim_interval until then
  std::vector<bool> cold_turn_;                // by lane: flips each cold safety turn; XPENDING on every other
  std::map<std::string, size_t> lane_of_ring_;  // ring channel -> lane
  size_t ring_confirmations_ = 0;   // SUBSCRIBE confirmations since the doorbell's last connect
  bool rung_ = false;               // every ring is subscribed: read on rings (else poll every lane)
  bool probe_outstanding_ = false;  // a probe was published and has not come back yet
  Timer safety_timer_;              // the safety poll's next lane
  Timer probe_timer_;               // the doorbell's health probe
  std::unique_ptr<RedisConnection> doorbell_;  // cluster: SUBSCRIBEs to the lanes' rings
};

}  // namespace expiry
