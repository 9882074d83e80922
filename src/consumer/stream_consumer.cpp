// See stream_consumer.h.
#include "consumer/stream_consumer.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "config/backoff.h"
#include "protocol/bucket_plan.h"
#include "protocol/hash_slot.h"
#include "protocol/redis_error.h"

namespace expiry {

namespace {
RedisConnection::Options connection_options(const ConsumerConfig& c, const std::string& role) {
  return RedisConnection::Options{c.redis,
                                  role,
                                  "expiry-consumer-" + role + "-" + c.consumer,
                                  c.connect_timeout,
                                  c.watchdog_interval,
                                  c.watchdog_timeout,
                                  c.reconnect,
                                  RedisConnection::Watchdog::Ping};
}
}  // namespace

StreamConsumer::StreamConsumer(EventLoop& loop, const ConsumerConfig& config, Handler handler)
    : loop_(loop),
      config_(config),
      handler_(std::move(handler)),
      names_{config.stream, config.dead_stream, config.group, config.consumer},
      reclaim_timer_(loop, [this] { reclaim_tick(); }),
      retry_timer_(loop, [this] { read_next(); }),
      group_retry_timer_(loop, [this] {
        if (!stopping_ && !group_ready_ && commands_.ready()) ensure_group();
      }),
      commands_(loop, connection_options(config, "commands")),
      reader_(loop, connection_options(config, "reader")),
      functions_(commands_) {
  commands_.set_on_ready([this] {
    read_task_buckets();
    ensure_group();
    if (on_commands_ready_) on_commands_ready_();
  });
  commands_.set_on_down([this](const std::string&) { group_ready_ = false; });
  reader_.set_on_ready([this] { read_next(); });
  auto refused = [this](const Reply& r) {
    if (!ever_ready_ && on_fatal_) on_fatal_("Redis refused the connection handshake: " + r.str);
  };
  commands_.set_on_handshake_error(refused);
  reader_.set_on_handshake_error(refused);
}

void StreamConsumer::start() {
  spdlog::info("consumer {} reading {} as group {} (dead letters to {})", config_.consumer, config_.stream,
               config_.group, config_.dead_stream);
  commands_.start();
  reader_.start();
  reclaim_timer_.arm(config_.reclaim_interval);
}

void StreamConsumer::ensure_group() {
  if (group_create_in_flight_) return;
  group_create_in_flight_ = true;
  // First start: at 0, so entries forwarded before any consumer ran are handled. After this
  // consumer had the group, a missing group was destroyed: at $, so nothing it (or the group's
  // other consumers) handled or dead-lettered is handled again.
  const bool had_group = ever_ready_;
  auto on_created = [this, had_group](const Reply& r) {
    group_create_in_flight_ = false;
    if (r.is_io_error()) return;  // the connection's next on_ready calls ensure_group again
    const bool existed = classify(r) == RedisErrorKind::BusyGroup;
    if (r.failed() && !existed) {
      ++stats_.errors;
      spdlog::error("cannot create group {} on {}: {}; retrying in 500 ms", config_.group, config_.stream, r.str);
      group_retry_timer_.arm(std::chrono::milliseconds(500));
      return;
    }
    if (had_group && !existed) {
      ++stats_.group_recreated;
      spdlog::error("{}", group_recreated_message(names_, last_read_id_));
    }
    group_ready_ = true;
    ever_ready_ = true;
    read_next();
  };
  commands_.command(group_create_command(names_, group_start_id(had_group)), on_created);
}

// A command answered NOGROUP: the group (or the whole stream) is gone. Created again by
// ensure_group, at $ once this consumer has had it.
void StreamConsumer::on_group_missing(const char* command) {
  if (!group_ready_ && group_create_in_flight_) return;
  spdlog::error("{}: consumer group {} on {} no longer exists (NOGROUP)", command, config_.group, config_.stream);
  group_ready_ = false;
  ensure_group();
}

void StreamConsumer::read_next() {
  if (stopping_ || read_in_flight_ || unsettled_ > 0 || !group_ready_ || !reader_.ready()) return;
  retry_timer_.cancel();
  read_in_flight_ = true;
  reader_.command(read_command(names_, config_.batch, config_.block), [this](const Reply& r) { on_read(r); });
}

bool StreamConsumer::ready(std::string& why) const {
  if (!commands_.ready() || !reader_.ready()) {
    why = "connections not ready";
    return false;
  }
  if (!group_ready_) {
    why = "consumer group not ready";
    return false;
  }
  return reads_.ready(why);
}

void StreamConsumer::on_read(const Reply& reply) {
  read_in_flight_ = false;
  if (reply.failed()) {
    if (!reply.is_io_error()) {
      reads_.on_failure(reply, "XREADGROUP");
      ++stats_.errors;
      if (classify(reply) == RedisErrorKind::NoGroup) {
        on_group_missing("XREADGROUP");
      } else {
        spdlog::error("XREADGROUP failed: {}", reply.str);
      }
      retry_timer_.arm(std::chrono::milliseconds(500));
    }
    maybe_finish_stop();
    return;
  }
  reads_.on_success();
  std::vector<StreamEntry> entries = entries_of_read(reply);
  stats_.read += entries.size();
  if (!entries.empty()) last_read_id_ = entries.back().entry_id;
  if (entries.empty()) {
    if (stopping_) {
      maybe_finish_stop();
    } else {
      read_next();
    }
    return;
  }
  handle_batch(std::move(entries));
}

void StreamConsumer::handle_batch(std::vector<StreamEntry> entries) {
  unsettled_ += entries.size();
  for (auto& entry : entries) {
    auto shared = std::make_shared<StreamEntry>(std::move(entry));
    dispatch_entry([this, shared](EntryDone done) { handler_(*shared, std::move(done)); },
                   [this, shared](HandleOutcome outcome, const std::string& reason) { settle(*shared, outcome, reason); });
  }
}

// Acknowledges an entry its handler committed. A failed one is acknowledged and its task
// scheduled again after retry_delay (or dead-lettered after its last attempt) by expiry_retry;
// an entry that names no valid task id stays pending (reclaimed, dead-lettered eventually).
void StreamConsumer::settle(const StreamEntry& entry, HandleOutcome outcome, const std::string& reason) {
  if (outcome == HandleOutcome::Retry) {
    ++stats_.retried;
    retry_later(entry, reason);
    return;
  }
  if (outcome == HandleOutcome::Reject) {
    // Stays pending if this fails: reclaimed, rejected again, dead-lettered by the reclaim path.
    spdlog::warn("entry {} of {} rejected ({}): moving it to {}", entry.entry_id, config_.stream, reason, config_.dead_stream);
    functions_.fcall(dead_letter_command(names_, entry.entry_id, entry.deliveries, "rejected: " + reason),
                     [this, id = entry.entry_id](const Reply& r) {
                       on_dead_lettered(id, r);
                       entry_settled();
                     });
    return;
  }
  commands_.command(ack_command(names_, entry.entry_id), [this, id = entry.entry_id](const Reply& r) {
    if (r.failed()) {
      ++stats_.errors;  // stays pending; the reclaim path delivers it again (handlers are idempotent)
      spdlog::warn("XACK {} failed: {}", id, r.describe());
    } else {
      ++stats_.acked;
    }
    entry_settled();
  });
}

void StreamConsumer::read_task_buckets() {
  if (config_.buckets > 0) {
    task_buckets_ = config_.buckets;
    return;
  }
  commands_.command({"GET", KeyLayout(config_.ns).buckets_key()}, [this](const Reply& r) {
    if (r.failed()) return;  // unknown: failed entries stay pending until the next connection reads it
    std::optional<std::string> stored;
    if (r.type == Reply::Type::String) stored = r.str;
    std::string error;
    if (auto plan = plan_buckets(stored, 0, false, config_.ns, &error)) {
      task_buckets_ = plan->buckets;
    } else {
      spdlog::error("{}; failed entries stay pending instead of being retried", error);
    }
  });
}

void StreamConsumer::retry_later(const StreamEntry& entry, const std::string& reason) {
  const std::string& task_id = entry.field(entry_field::kId);
  if (task_buckets_ == 0 || task_id.empty() || task_id_error(task_id)) {
    spdlog::warn("entry {} not handled ({}), delivery {}; it stays pending", entry.entry_id, reason, entry.deliveries);
    entry_settled();
    return;
  }
  const long long attempt = attempt_of(entry);
  const auto delay = retry_delay(config_.retry, static_cast<uint64_t>(attempt));
  const KeyLayout task(config_.ns, bucket_of(task_id, task_buckets_));
  functions_.fcall(retry_command(names_, task, task_id, entry.entry_id, delay, config_.max_deliveries, reason,
                                 config_.redis.db),
                   [this, id = entry.entry_id, task_id, attempt, delay, reason](const Reply& r) {
                     const RetryResult result = retry_result(r);
                     if (result == RetryResult::DeadLettered) ++stats_.dead_lettered;
                     if (result == RetryResult::Error) ++stats_.errors;
                     log_retry(result, config_.stream, id, task_id, attempt, delay, reason, r);
                     entry_settled();
                   });
}

void StreamConsumer::entry_settled() {
  if (unsettled_ > 0) --unsettled_;
  if (unsettled_ > 0) return;
  if (stopping_) {
    maybe_finish_stop();
  } else {
    read_next();
  }
}

void StreamConsumer::reclaim_tick() {
  reclaim_timer_.arm(config_.reclaim_interval);
  if (stopping_ || reclaim_in_flight_ || !group_ready_ || !commands_.ready()) return;
  reclaim_in_flight_ = true;
  commands_.command(pending_command(names_, config_.min_idle, config_.batch), [this](const Reply& r) { on_pending(r); });
}

void StreamConsumer::on_pending(const Reply& reply) {
  if (reply.failed() || reply.type != Reply::Type::Array || reply.elements.empty() || stopping_) {
    reclaim_in_flight_ = false;
    if (reply.failed() && !reply.is_io_error()) {
      if (classify(reply) == RedisErrorKind::NoGroup && !stopping_) {
        on_group_missing("XPENDING");
      } else {
        spdlog::error("XPENDING failed: {}", reply.str);
      }
    }
    return;
  }
  auto plan = std::make_shared<ReclaimPlan>(plan_reclaim(reply, config_.max_deliveries));
  for (const auto& [id, deliveries] : plan->dead) dead_letter(id, deliveries);
  if (plan->claim.empty()) {
    reclaim_in_flight_ = false;
    return;
  }
  commands_.command(claim_command(names_, config_.min_idle, plan->claim), [this, plan](const Reply& r) {
    reclaim_in_flight_ = false;
    if (r.failed()) {
      if (!r.is_io_error()) spdlog::error("XCLAIM failed: {}", r.str);
      return;
    }
    auto entries = claimed_entries(r, *plan);
    if (entries.empty()) return;
    stats_.reclaimed += entries.size();
    spdlog::info("reclaimed {} entries idle over {} ms", entries.size(), config_.min_idle.count());
    handle_batch(std::move(entries));
  });
}

void StreamConsumer::dead_letter(const std::string& entry_id, uint64_t deliveries) {
  functions_.fcall(dead_letter_command(names_, entry_id, deliveries),
                   [this, entry_id](const Reply& r) { on_dead_lettered(entry_id, r); });
}

void StreamConsumer::on_dead_lettered(const std::string& entry_id, const Reply& r) {
  if (r.type == Reply::Type::Integer && r.integer == 1) {
    ++stats_.dead_lettered;
    spdlog::warn("entry {} moved to {}", entry_id, config_.dead_stream);
  } else if (r.failed()) {
    ++stats_.errors;
    spdlog::error("dead-lettering {} failed: {}", entry_id, r.describe());
  }
}

void StreamConsumer::stop(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(done);
  reclaim_timer_.cancel();
  retry_timer_.cancel();
  spdlog::info("stopping: finishing the current batch");
  maybe_finish_stop();
}

void StreamConsumer::maybe_finish_stop() {
  if (!stopping_ || read_in_flight_ || unsettled_ > 0 || closed_ < 0) return;
  closed_ = -1;  // closing started
  auto left = std::make_shared<int>(2);
  auto one_closed = [this, left] {
    if (--*left == 0) {
      spdlog::info("stopped: read={} acked={} retried={} reclaimed={} dead_lettered={} group_recreated={}",
                   stats_.read, stats_.acked, stats_.retried, stats_.reclaimed, stats_.dead_lettered,
                   stats_.group_recreated);
      if (on_stopped_) on_stopped_();
    }
  };
  reader_.set_on_closed(one_closed);
  commands_.set_on_closed(one_closed);
  reader_.close();
  commands_.close();
}

}  // namespace expiry
