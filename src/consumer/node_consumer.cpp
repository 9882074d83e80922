// See node_consumer.h.
#include "consumer/node_consumer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <regex>

#include "config/backoff.h"
#include "functions/bucket_plan.h"
#include "functions/key_layout.h"
#include "redis/handshake_refusal.h"
#include "redis/hash_slot.h"
#include "redis/redis_error.h"

namespace expiry {

namespace {

// After a refusal that may pass (LOADING, CLUSTERDOWN, a stale map), before asking again.
constexpr std::chrono::milliseconds kRetryAfterError{500};

RedisConnection::Options connection_options(const ConsumerConfig& c, const RedisEndpoint& endpoint,
                                            const std::string& role, const std::string& client_name) {
  RedisConnection::Options o;
  o.endpoint = endpoint;
  o.role = role;
  o.client_name = client_name;
  o.connect_timeout = c.connect_timeout;
  o.watchdog_interval = c.watchdog_interval;
  o.watchdog_timeout = c.watchdog_timeout;
  o.backoff = c.reconnect;
  o.watchdog = RedisConnection::Watchdog::Ping;
  return o;
}

// Errors after which a cluster's slot map may have changed.
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

// The name in a library's "#!lua name=<name>" line, for log lines ("the handler's library" else).
std::string library_name(const std::string& source) {
  static const std::regex kName(R"(^#!lua name=([A-Za-z0-9_]+))");
  std::smatch m;
  return std::regex_search(source, m, kName) ? m[1].str() : "the handler's library";
}

}  // namespace

NodeConsumer::NodeConsumer(EventLoop& loop, ConsumerShared& shared, RedisEndpoint endpoint, std::string name,
                           std::vector<ConsumerLane> lanes, bool blocking)
    : loop_(loop),
      shared_(shared),
      name_(std::move(name)),
      lanes_(std::move(lanes)),
      states_(lanes_.size()),
      commands_(loop, connection_options(shared.config, endpoint, blocking ? "commands" : "worker " + name_,
                                         std::string("expiry-consumer-") + (blocking ? "commands-" : "worker-") +
                                             shared.config.consumer)),
      expiry_(commands_),
      library_(commands_, shared.handler_library),
      next_read_timer_(loop, [this] { read_next(); }),
      reclaim_timer_(loop, [this] { reclaim_tick(); }),
      group_retry_timer_(loop, [this] {
        if (!stopping_ && commands_.ready()) ensure_groups();
      }),
      due_(lanes_.size()),
      warm_until_(lanes_.size(), Clock::now() + 3 * shared.config.min_idle + shared.config.reclaim_interval),
      cold_turn_(lanes_.size()),
      safety_timer_(loop, [this] { safety_tick(); }),
      probe_timer_(loop, [this] { probe_tick(); }) {
  // Half the lanes start on a turn without XPENDING: the cold reclaims are spread from the start.
  for (size_t i = 0; i < cold_turn_.size(); ++i) cold_turn_[i] = i % 2 == 0;
  if (!blocking) {
    auto o = connection_options(shared.config, endpoint, "doorbell " + name_,
                                "expiry-consumer-doorbell-" + shared.config.consumer);
    o.watchdog = RedisConnection::Watchdog::Passive;  // proved alive by probe_tick
    doorbell_ = std::make_unique<RedisConnection>(loop, o);
    for (size_t i = 0; i < lanes_.size(); ++i) {
      if (lanes_[i].bucket) lane_of_ring_[KeyLayout(shared.config.ns, *lanes_[i].bucket).ring_channel()] = i;
    }
    doorbell_->set_on_ready([this] { subscribe_rings(); });
    doorbell_->set_on_down([this](const std::string&) { doorbell_lost(); });
  }
  if (blocking) {
    reader_ = std::make_unique<RedisConnection>(
        loop, connection_options(shared.config, endpoint, "reader", "expiry-consumer-reader-" + shared.config.consumer));
    reader_->set_on_ready([this] { read_next(); });
  }
  commands_.set_on_ready([this] { on_commands_ready(); });
  commands_.set_on_down([this](const std::string& why) {
    for (auto& s : states_) s.group_ready = false;
    if (shared_.on_cluster_change) {
      shared_.on_cluster_change(("lost the connection to " + name_ + ": " + why).c_str());
    }
  });
  const auto refused = [this, where = endpoint.where()](const Reply& r) {
    if (!shared_.any_ready && shared_.on_fatal) shared_.on_fatal(handshake_refusal_message(where, r));
  };
  commands_.set_on_handshake_error(refused);
  if (reader_) reader_->set_on_handshake_error(refused);
}

void NodeConsumer::start() {
  if (reader_) {
    spdlog::info("consumer {} reading {} as group {} (dead letters to {})", shared_.config.consumer,
                 lanes_.front().names.stream, shared_.config.group, lanes_.front().names.dead_stream);
  } else {
    spdlog::info("consumer {}: worker for {} reads {} bucket streams as group {}", shared_.config.consumer, name_,
                 lanes_.size(), shared_.config.group);
  }
  commands_.start();
  if (reader_) reader_->start();
  if (doorbell_) {
    doorbell_->start();
    safety_timer_.arm(LaneSchedule::poll_step(shared_.config.safety_poll, lanes_.size()));
    probe_timer_.arm(shared_.config.safety_poll);
  }
  reclaim_timer_.arm(shared_.config.reclaim_interval);
}

bool NodeConsumer::ready(std::string& why) const {
  if (stopping_ || !commands_.ready() || (reader_ && !reader_->ready())) {
    why = "the connections to " + name_ + " are not ready";
    return false;
  }
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (!states_[i].group_ready) {
      why = "consumer group " + shared_.config.group + " on " + lanes_[i].names.stream + " is not ready";
      return false;
    }
  }
  return reads_.ready(why);
}

void NodeConsumer::on_commands_ready() {
  shared_.any_ready = true;
  if (!shared_.handler_library.empty()) {
    // Every node needs the handler's library; FunctionCaller also reloads it on demand.
    library_.load([this](const Reply& r) {
      if (r.failed() && !r.is_io_error()) {
        spdlog::error("cannot load {} on {}: {}", library_name(shared_.handler_library), name_, r.str);
      }
    });
  }
  read_task_buckets();
  ensure_groups();
}

void NodeConsumer::read_task_buckets() {
  bool needed = false;
  for (const auto& lane : lanes_) needed = needed || !lane.bucket;
  if (!needed) return;
  if (shared_.config.buckets > 0) {
    task_buckets_ = shared_.config.buckets;
    return;
  }
  commands_.command({"GET", KeyLayout(shared_.config.ns).buckets_key()}, [this](const Reply& r) {
    if (r.failed()) return;  // unknown: failed entries stay pending until the next connection reads it
    std::optional<std::string> stored;
    if (r.type == Reply::Type::String) stored = r.str;
    std::string error;
    if (auto plan = plan_buckets(stored, 0, false, shared_.config.ns, &error)) {
      task_buckets_ = plan->buckets;
    } else {
      spdlog::error("{}; failed entries stay pending instead of being retried", error);
    }
  });
}

void NodeConsumer::ensure_groups() {
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (!states_[i].group_ready) ensure_group(i);
  }
}

void NodeConsumer::ensure_group(size_t lane) {
  LaneState& s = states_[lane];
  if (s.create_in_flight || stopping_) return;
  s.create_in_flight = true;
  // First start: at 0, so entries forwarded before any consumer ran are handled. After this
  // consumer had the group, a missing group was destroyed: at $, so nothing it (or the group's
  // other consumers) handled or dead-lettered is handled again.
  const GroupStream& names = lanes_[lane].names;
  const bool had_group = shared_.memory[names.stream].had_group;
  commands_.command(group_create_command(names, group_start_id(had_group)), [this, lane, had_group](const Reply& r) {
    LaneState& s = states_[lane];
    const GroupStream& names = lanes_[lane].names;
    s.create_in_flight = false;
    if (r.is_io_error()) return;  // the connection's next on_ready creates it
    const bool existed = classify(r) == RedisErrorKind::BusyGroup;
    if (r.failed() && !existed) {
      ++shared_.stats.errors;
      if (shared_.on_cluster_change && is_cluster_change(classify(r))) shared_.on_cluster_change("XGROUP CREATE refused");
      spdlog::error("cannot create group {} on {}: {}; retrying in {} ms", names.group, names.stream, r.str,
                    kRetryAfterError.count());
      group_retry_timer_.arm(kRetryAfterError);
      return;
    }
    auto& memory = shared_.memory[names.stream];
    if (had_group && !existed) {
      ++shared_.stats.group_recreated;
      spdlog::error("{}", group_recreated_message(names, memory.last_read_id));
    }
    s.group_ready = true;
    memory.had_group = true;
    due_.ring(lane);  // read once: what arrived before the doorbell could ring
    read_next();
  });
}

// A command answered NOGROUP: the group (or the whole stream) is gone. Created again by
// ensure_group, at $ once this consumer has had it.
void NodeConsumer::on_group_missing(size_t lane, const char* command) {
  LaneState& s = states_[lane];
  if (!s.group_ready && s.create_in_flight) return;
  const GroupStream& names = lanes_[lane].names;
  spdlog::error("{}: consumer group {} on {} no longer exists (NOGROUP)", command, names.group, names.stream);
  s.group_ready = false;
  ensure_group(lane);
}

void NodeConsumer::read_next() {
  if (stopping_ || reads_left_ > 0 || !reader().ready()) return;
  // One batch at a time, unless the handler takes more unsettled entries (max_unsettled).
  if (shared_.max_unsettled == 0 ? unsettled_ > 0 : unsettled_ >= shared_.max_unsettled) return;
  const int count = shared_.max_unsettled == 0
                        ? shared_.config.batch
                        : static_cast<int>(std::min<size_t>(static_cast<size_t>(shared_.config.batch),
                                                            shared_.max_unsettled - unsettled_));
  // A single Redis reads its lane always (blocking); a cluster node the lanes due, or every
  // lane while its doorbell is not subscribed.
  if (reader_ || !rung_) due_.ring_all();
  std::vector<size_t> lanes;
  for (size_t i : due_.take()) {
    if (states_[i].group_ready) {
      lanes.push_back(i);
    } else {
      due_.ring(i);  // read once its group exists
    }
  }
  if (lanes.empty()) return;
  next_read_timer_.cancel();
  round_failed_ = false;
  const std::optional<std::chrono::milliseconds> block =
      reader_ ? std::optional<std::chrono::milliseconds>(shared_.config.block) : std::nullopt;
  for (size_t i : lanes) {
    ++reads_left_;
    reader().command(read_command(lanes_[i].names, count, block),
                     [this, i, count](const Reply& r) { on_read(i, r, count); });
  }
}

void NodeConsumer::on_read(size_t lane, const Reply& reply, int count) {
  --reads_left_;
  if (reply.failed()) {
    round_failed_ = true;
    due_.ring(lane);  // read again after kRetryAfterError
    reads_.on_failure(reply, "XREADGROUP on " + name_);
    if (classify(reply) == RedisErrorKind::NoGroup) {
      ++shared_.stats.errors;
      on_group_missing(lane, "XREADGROUP");
    } else {
      command_failed("XREADGROUP", lane, reply);
    }
  } else {
    reads_.on_success();
    auto entries = entries_of_read(reply);
    if (entries.size() >= static_cast<size_t>(count)) due_.ring(lane);  // a full batch: more may wait
    if (!entries.empty()) {
      shared_.memory[lanes_[lane].names.stream].last_read_id = entries.back().entry_id;
      warm(lane);
    }
    shared_.stats.read += entries.size();
    for (auto& e : entries) round_.push_back(ReadEntry{lane, std::move(e)});
  }
  if (reads_left_ == 0) round_finished();
}

void NodeConsumer::round_finished() {
  std::vector<ReadEntry> entries;
  entries.swap(round_);
  if (!entries.empty()) {
    handle(std::move(entries));  // even when stopping: what was read is handled
    if (shared_.max_unsettled > 0) read_next();  // the handler queues: read on while it has room
    return;
  }
  if (stopping_) {
    maybe_finish_stop();
    return;
  }
  if (round_failed_) {
    next_read_timer_.arm(kRetryAfterError);
  } else if (reader_) {
    read_next();  // the blocking read waited already
  } else if (!rung_) {
    next_read_timer_.arm(shared_.config.idle);  // no doorbell: poll
  } else {
    read_next();  // the lanes rung while this round was in flight, if any
  }
}

void NodeConsumer::handle(std::vector<ReadEntry> entries) {
  unsettled_ += entries.size();
  for (auto& read : entries) {
    const size_t lane = read.lane;
    auto entry = std::make_shared<StreamEntry>(std::move(read.entry));
    held_.insert(entry->entry_id);
    dispatch_entry(
        [this, lane, entry](EntryDone done) {
          shared_.handler(*entry, EntryContext{lanes_[lane].bucket, commands_, library_}, std::move(done));
        },
        [this, lane, entry](HandleOutcome outcome, const std::string& reason, EntryDone::RetryDelay delay) {
          settle(lane, *entry, outcome, reason, delay);
        });
  }
}

// Acknowledges an entry its handler committed. A failed one is acknowledged and its task
// scheduled again after retry_delay (or dead-lettered after its last attempt) by expiry_retry;
// a rejected one is dead-lettered at once.
void NodeConsumer::settle(size_t lane, const StreamEntry& entry, HandleOutcome outcome, const std::string& reason,
                          EntryDone::RetryDelay delay) {
  held_.erase(entry.entry_id);
  const GroupStream& names = lanes_[lane].names;
  if (outcome == HandleOutcome::Retry) {
    ++shared_.stats.retried;
    retry_later(lane, entry, reason, delay);
    return;
  }
  if (outcome == HandleOutcome::Refused) {
    keep_pending_uncounted(lane, entry, reason);
    return;
  }
  if (outcome == HandleOutcome::Reject) {
    // Stays pending if this fails: reclaimed, rejected again, dead-lettered by the reclaim path.
    spdlog::warn("entry {} of {} rejected ({}): moving it to {}", entry.entry_id, names.stream, reason,
                 names.dead_stream);
    expiry_.fcall(dead_letter_command(names, entry.entry_id, entry.deliveries, "rejected: " + reason),
                  [this, lane, id = entry.entry_id](const Reply& r) {
                    on_dead_lettered(lane, id, r);
                    entry_settled();
                  });
    return;
  }
  commands_.command(ack_command(names, entry.entry_id), [this, lane](const Reply& r) {
    if (r.failed()) {
      command_failed("XACK", lane, r);  // stays pending; reclaimed and handled again (handlers are idempotent)
    } else {
      ++shared_.stats.acked;
    }
    entry_settled();
  });
}

// Redis refused the handler's own call: nothing is wrong with the task, so neither an attempt
// (expiry_retry) nor a delivery (the reclaim path's dead-lettering) is spent on it.
void NodeConsumer::keep_pending_uncounted(size_t lane, const StreamEntry& entry, const std::string& reason) {
  ++shared_.stats.refused;
  const GroupStream& names = lanes_[lane].names;
  if (auto dropped = refused_log_.allow(Clock::now())) {
    spdlog::error("entry {} of {} not handled: Redis refused the handler's call ({}). It stays pending and is "
                  "handled again after {} ms, without counting as a delivery; fix the server or the user's ACL rules "
                  "(docs/security.md){}",
                  entry.entry_id, names.stream, reason, shared_.config.min_idle.count(),
                  *dropped > 0 ? " (" + std::to_string(*dropped) + " more such entries since the last line)" : "");
  }
  commands_.command(uncount_delivery_command(names, entry.entry_id, entry.deliveries), [this, lane](const Reply& r) {
    if (r.failed()) command_failed("XCLAIM", lane, r);  // the delivery stays counted: at worst as before
    entry_settled();
  });
}

void NodeConsumer::retry_later(size_t lane, const StreamEntry& entry, const std::string& reason,
                               EntryDone::RetryDelay handler_delay) {
  const GroupStream& names = lanes_[lane].names;
  const std::string& task_id = entry.field(entry_field::kId);
  // The task goes back to the bucket of the stream it came from (its slot on a cluster), or on a
  // lane without a bucket to the bucket of its id.
  const std::optional<int> bucket =
      lanes_[lane].bucket ? lanes_[lane].bucket
                          : (task_buckets_ > 0 && !task_id.empty() ? std::optional<int>(bucket_of(task_id, task_buckets_))
                                                                   : std::nullopt);
  if (!bucket || task_id.empty() || task_id_error(task_id)) {
    spdlog::warn("entry {} of {} not handled ({}), delivery {}; it stays pending", entry.entry_id, names.stream, reason,
                 entry.deliveries);
    entry_settled();
    return;
  }
  const long long attempt = attempt_of(entry);
  const auto delay = handler_delay ? std::max(*handler_delay, std::chrono::milliseconds(0))
                                   : retry_delay(shared_.config.retry, static_cast<uint64_t>(attempt));
  const KeyLayout task(shared_.config.ns, *bucket);
  const int db = commands_.target().db;
  expiry_.fcall(retry_command(names, task, task_id, entry.entry_id, delay, shared_.config.max_deliveries, reason, db),
                [this, lane, id = entry.entry_id, task_id, attempt, delay, reason](const Reply& r) {
                  const RetryResult result = retry_result(r);
                  if (result == RetryResult::DeadLettered) ++shared_.stats.dead_lettered;
                  if (result == RetryResult::Error) {
                    ++shared_.stats.errors;  // stays pending: reclaimed later
                    if (shared_.on_cluster_change && is_cluster_change(classify(r))) {
                      shared_.on_cluster_change("expiry_retry refused");
                    }
                  }
                  log_retry(result, lanes_[lane].names.stream, id, task_id, attempt, delay, reason, r);
                  entry_settled();
                });
}

void NodeConsumer::on_dead_lettered(size_t lane, const std::string& entry_id, const Reply& r) {
  if (r.type == Reply::Type::Integer && r.integer == 1) {
    ++shared_.stats.dead_lettered;
    spdlog::warn("entry {} moved to {}", entry_id, lanes_[lane].names.dead_stream);
  } else if (r.failed()) {
    ++shared_.stats.errors;
    // Retried at every reclaim round while it fails (a missing ACL rule): one line a second.
    if (auto dropped = dead_letter_log_.allow(Clock::now())) {
      spdlog::error("dead-lettering {} failed: {}{}", entry_id, r.describe(),
                    *dropped > 0 ? " (" + std::to_string(*dropped) + " more failures since the last line)" : "");
    }
  }
}

void NodeConsumer::entry_settled() {
  if (unsettled_ > 0) --unsettled_;
  if (shared_.max_unsettled > 0 && !stopping_) {
    read_next();  // room for more (a no-op while a read is in flight or the handler is full)
    if (unsettled_ > 0) return;
  }
  if (unsettled_ > 0) return;
  if (stopping_) {
    maybe_finish_stop();
  } else {
    read_next();
  }
}

void NodeConsumer::reclaim_tick() {
  reclaim_timer_.arm(shared_.config.reclaim_interval);
  if (stopping_ || reclaims_left_ > 0 || !commands_.ready()) return;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (states_[i].group_ready && !reclaim_skips(i)) reclaim_lane(i);
  }
}

void NodeConsumer::reclaim_lane(size_t lane) {
  ++reclaims_left_;
  commands_.command(pending_command(lanes_[lane].names, shared_.config.min_idle, shared_.config.batch),
                    [this, lane](const Reply& r) { on_pending(lane, r); });
}

void NodeConsumer::warm(size_t lane) {
  warm_until_[lane] = Clock::now() + 3 * shared_.config.min_idle + shared_.config.reclaim_interval;
}

bool NodeConsumer::reclaim_skips(size_t lane) const {
  return !reader_ && rung_ && Clock::now() > warm_until_[lane];
}

void NodeConsumer::on_pending(size_t lane, const Reply& reply) {
  if (reply.failed() || stopping_) {
    if (reply.failed()) {
      if (classify(reply) == RedisErrorKind::NoGroup && !stopping_) {
        ++shared_.stats.errors;
        on_group_missing(lane, "XPENDING");
      } else {
        command_failed("XPENDING", lane, reply);
      }
    }
    reclaim_done();
    return;
  }
  const GroupStream& names = lanes_[lane].names;
  auto plan = std::make_shared<ReclaimPlan>(plan_reclaim(reply, shared_.config.max_deliveries));
  // Entries this consumer's handler still holds are not idle, only slow (a webhook queued behind
  // a slow endpoint): neither claimed again nor dead-lettered under it.
  const auto held = [this](const std::string& id) { return held_.count(id) > 0; };
  plan->claim.erase(std::remove_if(plan->claim.begin(), plan->claim.end(), held), plan->claim.end());
  plan->dead.erase(std::remove_if(plan->dead.begin(), plan->dead.end(),
                                  [&held](const std::pair<std::string, uint64_t>& d) { return held(d.first); }),
                   plan->dead.end());
  for (const auto& [id, deliveries] : plan->dead) {
    expiry_.fcall(dead_letter_command(names, id, deliveries),
                  [this, lane, id = id](const Reply& r) { on_dead_lettered(lane, id, r); });
  }
  if (plan->claim.empty()) {
    reclaim_done();
    return;
  }
  commands_.command(claim_command(names, shared_.config.min_idle, plan->claim), [this, lane, plan](const Reply& r) {
    if (r.failed()) {
      command_failed("XCLAIM", lane, r);
      reclaim_done();
      return;
    }
    auto claimed = claimed_entries(r, *plan);
    if (!claimed.empty()) {
      shared_.stats.reclaimed += claimed.size();
      spdlog::info("reclaimed {} entries of {} idle over {} ms", claimed.size(), lanes_[lane].names.stream,
                   shared_.config.min_idle.count());
      std::vector<ReadEntry> entries;
      for (auto& e : claimed) entries.push_back(ReadEntry{lane, std::move(e)});
      handle(std::move(entries));
    }
    reclaim_done();
  });
}

void NodeConsumer::reclaim_done() {
  if (reclaims_left_ > 0) --reclaims_left_;
  if (stopping_) maybe_finish_stop();
}

void NodeConsumer::command_failed(const char* command, size_t lane, const Reply& reply) {
  const RedisErrorKind kind = classify(reply);
  if (kind != RedisErrorKind::Io) ++shared_.stats.errors;
  if (shared_.on_cluster_change && is_cluster_change(kind)) {
    shared_.on_cluster_change(kind == RedisErrorKind::Io ? "a node connection failed" : to_string(kind));
  }
  if (kind == RedisErrorKind::Io) return;  // on_down says it once
  if (auto dropped = error_log_.allow(Clock::now())) {
    spdlog::warn("{} failed on {} at {}: {} ({} such lines not logged)", command, lanes_[lane].names.stream, name_,
                 reply.describe(), *dropped);
  }
}

void NodeConsumer::subscribe_rings() {
  ring_confirmations_ = 0;
  rung_ = false;
  probe_outstanding_ = false;
  for (const auto& [channel, lane] : lane_of_ring_) {
    doorbell_->subscribe({"SUBSCRIBE", channel}, [this](const Reply& m) { on_ring(m); });
  }
}

void NodeConsumer::on_ring(const Reply& msg) {
  if (msg.type != Reply::Type::Array || msg.elements.size() < 3) return;  // NULL: the connection is lost (on_down)
  const std::string& kind = msg.elements[0].str;
  if (kind == "subscribe") {
    if (++ring_confirmations_ == lane_of_ring_.size() && !rung_) {
      rung_ = true;
      spdlog::info("consumer {}: doorbell of {} buckets subscribed on {}", shared_.config.consumer,
                   lane_of_ring_.size(), name_);
      due_.ring_all();  // what was appended while no ring could be heard
      if (!stopping_) read_next();
    }
    return;
  }
  if (kind != "message") return;
  if (msg.elements[2].str == "probe") {
    probe_outstanding_ = false;
    return;
  }
  auto it = lane_of_ring_.find(msg.elements[1].str);
  if (it == lane_of_ring_.end()) return;
  due_.ring(it->second);
  warm(it->second);
  if (!stopping_) read_next();
}

// The doorbell's connection is lost (it reconnects by itself, and subscribe_rings confirms every
// ring again): until then, every lane is read in rounds, now first.
void NodeConsumer::doorbell_lost() {
  if (!rung_) return;
  rung_ = false;
  spdlog::warn("consumer {}: doorbell on {} lost; polling every {} ms until it is subscribed again",
               shared_.config.consumer, name_, shared_.config.idle.count());
  if (!stopping_) read_next();
}

void NodeConsumer::safety_tick() {
  safety_timer_.arm(LaneSchedule::poll_step(shared_.config.safety_poll, lanes_.size()));
  if (stopping_ || !rung_) return;  // unsubscribed: every lane is polled anyway
  const size_t lane = due_.poll_next();
  read_next();
  // A cold lane's reclaim comes with every other safety read (the reclaim tick skips it).
  if (lane >= cold_turn_.size() || !reclaim_skips(lane)) return;
  cold_turn_[lane] = !cold_turn_[lane];
  if (!cold_turn_[lane] && states_[lane].group_ready && commands_.ready()) reclaim_lane(lane);
}

// Every safety_poll: PUBLISH "probe" on a ring from the command connection (on this node, so the
// reply counts the doorbell's subscription). No subscriber, or the previous probe not back by
// now: the doorbell reconnects, and the lanes are polled meanwhile.
void NodeConsumer::probe_tick() {
  probe_timer_.arm(shared_.config.safety_poll);
  if (stopping_ || !rung_ || lane_of_ring_.empty() || !commands_.ready()) return;
  const auto lost = [this](const std::string& why) {
    spdlog::warn("consumer {}: doorbell on {}: {}; reconnecting it", shared_.config.consumer, name_, why);
    doorbell_lost();
    doorbell_->force_reconnect(why);
  };
  if (probe_outstanding_) {
    lost("health probe not received within " + std::to_string(shared_.config.safety_poll.count()) + " ms");
    return;
  }
  probe_outstanding_ = true;
  commands_.command({"PUBLISH", lane_of_ring_.begin()->first, "probe"}, [this, lost](const Reply& r) {
    if (r.type == Reply::Type::Integer && r.integer == 0 && rung_) lost("health probe had no subscriber");
    if (r.failed()) probe_outstanding_ = false;  // not sent: no verdict
  });
}

void NodeConsumer::stop(std::function<void()> done) {
  if (stopping_) return;
  stopping_ = true;
  on_stopped_ = std::move(done);
  next_read_timer_.cancel();
  reclaim_timer_.cancel();
  group_retry_timer_.cancel();
  safety_timer_.cancel();
  probe_timer_.cancel();
  maybe_finish_stop();
}

void NodeConsumer::maybe_finish_stop() {
  if (!stopping_ || closing_ || reads_left_ > 0 || unsettled_ > 0 || reclaims_left_ > 0) return;
  closing_ = true;
  auto left = std::make_shared<int>(1 + (reader_ ? 1 : 0) + (doorbell_ ? 1 : 0));
  auto one_closed = [this, left] {
    if (--*left == 0 && on_stopped_) on_stopped_();
  };
  commands_.set_on_closed(one_closed);
  commands_.close();
  if (reader_) {
    reader_->set_on_closed(one_closed);
    reader_->close();
  }
  if (doorbell_) {
    doorbell_->set_on_closed(one_closed);
    doorbell_->close();
  }
}

}  // namespace expiry
