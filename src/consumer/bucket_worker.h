// One primary's share of a cluster consumer (cluster_consumer.h): over one connection to that
// primary, it reads the bucket streams NS:{b}:stream of the buckets the primary serves, hands
// each entry to the handler, acknowledges it once the handler said Done, reclaims entries left
// idle too long, and dead-letters them into NS:{b}:dead after max_deliveries.
//
// Contracts:
// - One XREADGROUP per bucket stream (a multi-stream read is CROSSSLOT on a cluster), without
//   BLOCK, pipelined as one round. When a round read nothing, the next waits config.idle;
//   otherwise it starts as soon as every entry of the round is settled.
// - The consumer group is created per bucket stream (XGROUP CREATE ... 0 MKSTREAM; BUSYGROUP is
//   fine); a group destroyed later is created again at $ (group_commands.h).
// - MOVED, ASK, TRYAGAIN, CLUSTERDOWN, READONLY or a lost connection ask the topology for a
//   refresh; the owner replaces the worker when the map moves its buckets. Entries whose ack
//   failed stay pending and are reclaimed (handlers must be idempotent).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "config/consumer_config.h"
#include "config/log_limiter.h"
#include "consumer/entry_handler.h"
#include "consumer/group_commands.h"
#include "io/cluster_topology.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "io/redis_connection.h"
#include "protocol/cluster_slots.h"
#include "protocol/stream_entry.h"
#include "protocol/write_readiness.h"

namespace expiry {

// Where a handler runs an entry of bucket `bucket`: on the connection to the bucket's primary
// (the one the acks use), with the handler's Function library loaded there.
struct BucketContext {
  int bucket = 0;
  RedisConnection& commands;
  FunctionCaller& library;  // ClusterConsumer::Options::handler_library (expiry_v1 if none)
};

using BucketHandler = std::function<void(const StreamEntry&, const BucketContext&, EntryDone)>;

// What every worker of one cluster consumer shares; owned by the ClusterConsumer.
struct WorkerShared {
  // What outlives a worker: a bucket moves between workers when the map changes.
  struct BucketMemory {
    bool had_group = false;    // the group existed once: a later NOGROUP means it was destroyed
    std::string last_read_id;  // newest entry id read; empty before the first
  };

  const ConsumerConfig& config;
  ClusterTopology& topology;
  BucketHandler handler;
  std::string handler_library;                      // Lua source loaded on every primary; empty: none
  std::vector<BucketMemory> memory;                 // by bucket
  ConsumerStats stats;                              // of every worker
  std::function<void(const std::string&)> on_fatal; // AUTH/SELECT refused before any worker was ready
  bool any_ready = false;                           // some worker's connection was ready once
};

class BucketWorker {
 public:
  BucketWorker(EventLoop& loop, WorkerShared& shared, NodeAddress node, std::vector<int> buckets);
  BucketWorker(const BucketWorker&) = delete;
  BucketWorker& operator=(const BucketWorker&) = delete;

  void start();
  // Stops reading; entries already read are handled (and acked if possible), then the
  // connection closes and `done` runs from the loop (the owner may destroy the worker later,
  // not from inside `done`).
  void stop(std::function<void()> done);

  const NodeAddress& node() const { return node_; }
  const std::vector<int>& buckets() const { return bucket_ids_; }
  // The connection is up, every bucket's group exists, and the node takes the reads (a replica
  // refuses XREADGROUP with READONLY: WriteReadiness).
  bool ready(std::string& why) const;

 private:
  struct Bucket {
    int bucket = 0;
    GroupStream names;
    bool group_ready = false;
    bool create_in_flight = false;
  };
  struct ReadEntry {
    size_t bucket_index;
    StreamEntry entry;
  };

  void on_connection_ready();
  void ensure_groups();
  void ensure_group(size_t index);
  void on_group_missing(size_t index, const char* command);
  void poll();
  void on_read(size_t index, const Reply& reply);
  void round_finished();
  void handle(std::vector<ReadEntry> entries);
  void settle(size_t index, const StreamEntry& entry, HandleOutcome outcome, const std::string& reason);
  void on_dead_lettered(size_t index, const std::string& entry_id, const Reply& r);
  void entry_settled();
  void reclaim_tick();
  void on_pending(size_t index, const Reply& reply);
  void reclaim_done();
  // Counts and logs a failed command; cluster errors and lost connections ask for a refresh.
  void command_failed(const char* command, size_t index, const Reply& reply);
  void maybe_finish_stop();

  EventLoop& loop_;
  WorkerShared& shared_;
  const NodeAddress node_;
  const std::vector<int> bucket_ids_;
  std::vector<Bucket> buckets_;
  RedisConnection conn_;            // reads, acks, reclaims, dead letters and the handler's calls
  FunctionCaller expiry_;           // expiry_dead_letter
  FunctionCaller library_;          // the handler's library
  size_t reads_left_ = 0;           // XREADGROUPs of the current round awaiting their reply
  bool round_failed_ = false;       // a read of the current round failed
  std::vector<ReadEntry> round_;    // entries of the current round
  size_t unsettled_ = 0;            // entries handed to the handler and not yet acked/released
  size_t reclaims_left_ = 0;        // XPENDING/XCLAIM of the current reclaim round in flight
  bool stopping_ = false;
  bool closing_ = false;
  std::function<void()> on_stopped_;
  LogLimiter error_log_{std::chrono::seconds(1)};
  Timer idle_timer_;                // the next round after an empty (or failed) one
  Timer reclaim_timer_;
  Timer group_retry_timer_;         // creates groups again after a refusal that may pass
  WriteReadiness reads_;  // the buckets' reads succeed (ready())
};

}  // namespace expiry
