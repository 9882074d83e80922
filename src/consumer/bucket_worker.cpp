// See bucket_worker.h.
#include "consumer/bucket_worker.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "config/backoff.h"
#include "protocol/key_layout.h"
#include "protocol/redis_error.h"

namespace expiry {

namespace {

// After a refusal that may pass (LOADING, CLUSTERDOWN, a stale map), before asking again.
constexpr std::chrono::milliseconds kRetryAfterError{500};

RedisConnection::Options worker_connection(const ConsumerConfig& c, const RedisEndpoint& endpoint,
                                           const NodeAddress& node) {
  RedisConnection::Options o;
  o.endpoint = endpoint;
  o.role = "worker " + node.to_string();
  o.client_name = "expiry-consumer-worker-" + c.consumer;
  o.connect_timeout = c.connect_timeout;
  o.watchdog_interval = c.watchdog_interval;
  o.watchdog_timeout = c.watchdog_timeout;
  o.backoff = c.reconnect;
  o.watchdog = RedisConnection::Watchdog::Ping;
  return o;
}

// Errors after which the slot map may have changed.
bool is_cluster_change(RedisErrorKind kind) {
  switch (kind) {
    case RedisErrorKind::Moved:
    case RedisErrorKind::Ask:
    case RedisErrorKind::TryAgain:
    case RedisErrorKind::ClusterDown:
    case RedisErrorKind::ReadOnly:
    case RedisErrorKind::MasterDown:
    case RedisErrorKind::Io:
      return true;
    default:
      return false;
  }
}

}  // namespace

BucketWorker::BucketWorker(EventLoop& loop, WorkerShared& shared, NodeAddress node, std::vector<int> buckets)
    : loop_(loop),
      shared_(shared),
      node_(std::move(node)),
      bucket_ids_(std::move(buckets)),
      conn_(loop, worker_connection(shared.config, endpoint_at(shared.config.redis, node_), node_)),
      expiry_(conn_),
      library_(conn_, shared.handler_library),
      idle_timer_(loop, [this] { poll(); }),
      reclaim_timer_(loop, [this] { reclaim_tick(); }),
      group_retry_timer_(loop, [this] {
        if (!stopping_ && conn_.ready()) ensure_groups();
      }) {
  for (int b : bucket_ids_) {
    const KeyLayout keys(shared_.config.ns, b);
    buckets_.push_back(Bucket{
        b, GroupStream{keys.bucket_stream(), keys.bucket_dead_stream(), shared_.config.group, shared_.config.consumer}});
  }
  conn_.set_on_ready([this] { on_connection_ready(); });
  conn_.set_on_down([this](const std::string& why) {
    for (auto& b : buckets_) b.group_ready = false;
    shared_.topology.refresh(("lost the connection to " + node_.to_string() + ": " + why).c_str());
  });
  conn_.set_on_handshake_error([this](const Reply& r) {
    if (!shared_.any_ready && shared_.on_fatal) shared_.on_fatal("Redis refused the connection handshake: " + r.str);
  });
}

void BucketWorker::start() {
  spdlog::info("consumer {}: worker for {} reads {} bucket streams as group {}", shared_.config.consumer,
               node_.to_string(), buckets_.size(), shared_.config.group);
  conn_.start();
  reclaim_timer_.arm(shared_.config.reclaim_interval);
}

bool BucketWorker::ready(std::string& why) const {
  if (!conn_.ready() || stopping_) {
    why = "the connection to " + node_.to_string() + " is not ready";
    return false;
  }
  for (const auto& b : buckets_) {
    if (!b.group_ready) {
      why = "a consumer group on " + node_.to_string() + " is not ready";
      return false;
    }
  }
  return reads_.ready(why);
}

void BucketWorker::on_connection_ready() {
  shared_.any_ready = true;
  if (!shared_.handler_library.empty()) {
    // Every primary needs the handler's library; FunctionCaller also reloads it on demand.
    library_.load([node = node_.to_string()](const Reply& r) {
      if (r.failed() && !r.is_io_error()) spdlog::error("cannot load the handler's library on {}: {}", node, r.str);
    });
  }
  ensure_groups();
}

void BucketWorker::ensure_groups() {
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (!buckets_[i].group_ready) ensure_group(i);
  }
}

void BucketWorker::ensure_group(size_t index) {
  Bucket& b = buckets_[index];
  if (b.create_in_flight || stopping_) return;
  b.create_in_flight = true;
  const bool had_group = shared_.memory[b.bucket].had_group;
  conn_.command(group_create_command(b.names, group_start_id(had_group)), [this, index, had_group](const Reply& r) {
    Bucket& b = buckets_[index];
    b.create_in_flight = false;
    if (r.is_io_error()) return;  // the connection's next on_ready creates it
    const bool existed = classify(r) == RedisErrorKind::BusyGroup;
    if (r.failed() && !existed) {
      command_failed("XGROUP CREATE", index, r);
      group_retry_timer_.arm(kRetryAfterError);
      return;
    }
    auto& memory = shared_.memory[b.bucket];
    if (had_group && !existed) {
      ++shared_.stats.group_recreated;
      spdlog::error("{}", group_recreated_message(b.names, memory.last_read_id));
    }
    b.group_ready = true;
    memory.had_group = true;
    poll();
  });
}

void BucketWorker::on_group_missing(size_t index, const char* command) {
  Bucket& b = buckets_[index];
  if (!b.group_ready) return;
  spdlog::error("{}: consumer group {} on {} no longer exists (NOGROUP)", command, b.names.group, b.names.stream);
  b.group_ready = false;
  ensure_group(index);
}

void BucketWorker::poll() {
  if (stopping_ || reads_left_ > 0 || unsettled_ > 0 || !conn_.ready()) return;
  idle_timer_.cancel();
  round_failed_ = false;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (!buckets_[i].group_ready) continue;
    ++reads_left_;
    conn_.command(read_command(buckets_[i].names, shared_.config.batch, std::nullopt),
                  [this, i](const Reply& r) { on_read(i, r); });
  }
}

void BucketWorker::on_read(size_t index, const Reply& reply) {
  --reads_left_;
  if (reply.failed()) {
    round_failed_ = true;
    reads_.on_failure(reply, "XREADGROUP on " + node_.to_string());
    if (classify(reply) == RedisErrorKind::NoGroup) {
      ++shared_.stats.errors;
      on_group_missing(index, "XREADGROUP");
    } else {
      command_failed("XREADGROUP", index, reply);
    }
  } else {
    reads_.on_success();
    auto entries = entries_of_read(reply);
    if (!entries.empty()) shared_.memory[buckets_[index].bucket].last_read_id = entries.back().entry_id;
    shared_.stats.read += entries.size();
    for (auto& e : entries) round_.push_back(ReadEntry{index, std::move(e)});
  }
  if (reads_left_ == 0) round_finished();
}

void BucketWorker::round_finished() {
  std::vector<ReadEntry> entries;
  entries.swap(round_);
  if (!entries.empty()) {
    handle(std::move(entries));  // even when stopping: what was read is handled
    return;
  }
  if (stopping_) {
    maybe_finish_stop();
    return;
  }
  idle_timer_.arm(round_failed_ ? kRetryAfterError : shared_.config.idle);
}

void BucketWorker::handle(std::vector<ReadEntry> entries) {
  unsettled_ += entries.size();
  for (auto& read : entries) {
    const size_t index = read.bucket_index;
    auto entry = std::make_shared<StreamEntry>(std::move(read.entry));
    dispatch_entry(
        [this, index, entry](EntryDone done) {
          shared_.handler(*entry, BucketContext{buckets_[index].bucket, conn_, library_}, std::move(done));
        },
        [this, index, entry](HandleOutcome outcome, const std::string& reason) {
          settle(index, *entry, outcome, reason);
        });
  }
}

void BucketWorker::settle(size_t index, const StreamEntry& entry, HandleOutcome outcome, const std::string& reason) {
  const Bucket& b = buckets_[index];
  if (outcome == HandleOutcome::Retry) {
    ++shared_.stats.retried;
    const std::string& task_id = entry.field(entry_field::kId);
    if (task_id.empty() || task_id_error(task_id)) {
      spdlog::warn("entry {} of {} not handled ({}), delivery {}; it stays pending", entry.entry_id, b.names.stream,
                   reason, entry.deliveries);
      entry_settled();
      return;
    }
    // The task goes back to the bucket of the stream it came from (its slot on the cluster).
    const long long attempt = attempt_of(entry);
    const auto delay = retry_delay(shared_.config.retry, static_cast<uint64_t>(attempt));
    const KeyLayout task(shared_.config.ns, b.bucket);
    expiry_.fcall(retry_command(b.names, task, task_id, entry.entry_id, delay, shared_.config.max_deliveries, reason,
                                0),  // a cluster has database 0 only
                  [this, index, id = entry.entry_id, task_id, attempt, delay, reason](const Reply& r) {
                    const RetryResult result = retry_result(r);
                    if (result == RetryResult::DeadLettered) ++shared_.stats.dead_lettered;
                    if (result == RetryResult::Error && r.failed()) {
                      command_failed("expiry_retry", index, r);  // stays pending: reclaimed later
                    } else {
                      log_retry(result, buckets_[index].names.stream, id, task_id, attempt, delay, reason, r);
                    }
                    entry_settled();
                  });
    return;
  }
  if (outcome == HandleOutcome::Reject) {
    // Stays pending if this fails: reclaimed, rejected again, dead-lettered by the reclaim path.
    spdlog::warn("entry {} of {} rejected ({}): moving it to {}", entry.entry_id, b.names.stream, reason, b.names.dead_stream);
    expiry_.fcall(dead_letter_command(b.names, entry.entry_id, entry.deliveries, "rejected: " + reason),
                  [this, index, id = entry.entry_id](const Reply& r) {
                    on_dead_lettered(index, id, r);
                    entry_settled();
                  });
    return;
  }
  conn_.command(ack_command(b.names, entry.entry_id), [this, index](const Reply& r) {
    if (r.failed()) {
      command_failed("XACK", index, r);  // stays pending; reclaimed and handled again (handlers are idempotent)
    } else {
      ++shared_.stats.acked;
    }
    entry_settled();
  });
}

void BucketWorker::on_dead_lettered(size_t index, const std::string& entry_id, const Reply& r) {
  if (r.type == Reply::Type::Integer && r.integer == 1) {
    ++shared_.stats.dead_lettered;
    spdlog::warn("entry {} moved to {}", entry_id, buckets_[index].names.dead_stream);
  } else if (r.failed()) {
    command_failed("expiry_dead_letter", index, r);
  }
}

void BucketWorker::entry_settled() {
  if (unsettled_ > 0) --unsettled_;
  if (unsettled_ > 0) return;
  if (stopping_) {
    maybe_finish_stop();
  } else {
    poll();
  }
}

void BucketWorker::reclaim_tick() {
  reclaim_timer_.arm(shared_.config.reclaim_interval);
  if (stopping_ || reclaims_left_ > 0 || !conn_.ready()) return;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (!buckets_[i].group_ready) continue;
    ++reclaims_left_;
    conn_.command(pending_command(buckets_[i].names, shared_.config.min_idle, shared_.config.batch),
                  [this, i](const Reply& r) { on_pending(i, r); });
  }
}

void BucketWorker::on_pending(size_t index, const Reply& reply) {
  if (reply.failed() || stopping_) {
    if (reply.failed()) {
      if (classify(reply) == RedisErrorKind::NoGroup && !stopping_) {
        ++shared_.stats.errors;
        on_group_missing(index, "XPENDING");
      } else {
        command_failed("XPENDING", index, reply);
      }
    }
    reclaim_done();
    return;
  }
  const Bucket& b = buckets_[index];
  auto plan = std::make_shared<ReclaimPlan>(plan_reclaim(reply, shared_.config.max_deliveries));
  for (const auto& [id, deliveries] : plan->dead) {
    expiry_.fcall(dead_letter_command(b.names, id, deliveries),
                  [this, index, id = id](const Reply& r) { on_dead_lettered(index, id, r); });
  }
  if (plan->claim.empty()) {
    reclaim_done();
    return;
  }
  conn_.command(claim_command(b.names, shared_.config.min_idle, plan->claim), [this, index, plan](const Reply& r) {
    if (r.failed()) {
      command_failed("XCLAIM", index, r);
      reclaim_done();
      return;
    }
    auto claimed = claimed_entries(r, *plan);
    if (!claimed.empty()) {
      shared_.stats.reclaimed += claimed.size();
      spdlog::info("reclaimed {} entries of {} idle over {} ms", claimed.size(), buckets_[index].names.stream,
                   shared_.config.min_idle.count());
      std::vector<ReadEntry> entries;
      for (auto& e : claimed) entries.push_back(ReadEntry{index, std::move(e)});
      handle(std::move(entries));
    }
    reclaim_done();
  });
}

void BucketWorker::reclaim_done() {
  if (reclaims_left_ > 0) --reclaims_left_;
  if (stopping_) maybe_finish_stop();
}

void BucketWorker::command_failed(const char* command, size_t index, const Reply& reply) {
  const RedisErrorKind kind = classify(reply);
  if (kind != RedisErrorKind::Io) ++shared_.stats.errors;
  if (is_cluster_change(kind)) {
    shared_.topology.refresh(kind == RedisErrorKind::Io ? "a node connection failed" : to_string(kind));
  }
  if (kind == RedisErrorKind::Io) return;  // on_down says it once
  if (auto dropped = error_log_.allow(Clock::now())) {
    spdlog::warn("{} on {} at {} failed: {} ({} such lines not logged)", command, buckets_[index].names.stream,
                 node_.to_string(), reply.describe(), *dropped);
  }
}

void BucketWorker::stop(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(done);
  idle_timer_.cancel();
  reclaim_timer_.cancel();
  group_retry_timer_.cancel();
  maybe_finish_stop();
}

void BucketWorker::maybe_finish_stop() {
  if (!stopping_ || closing_ || reads_left_ > 0 || unsettled_ > 0 || reclaims_left_ > 0) return;
  closing_ = true;
  conn_.set_on_closed([this] {
    if (on_stopped_) on_stopped_();
  });
  conn_.close();
}

}  // namespace expiry
