// See producer.h. The facade: each operation validates its input, then is one call on the
// task's bucket, a walk over every bucket (bucket_calls.h), a stream of schedule calls
// (schedule_stream.h) or a read (task_lister.h).
#include "producer/producer.h"

#include <utility>

#include "base/text_escape.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "io/sync/routed_client.h"
#include "producer/bucket_calls.h"
#include "producer/producer_target.h"
#include "producer/replica_confirmer.h"
#include "producer/schedule_stream.h"
#include "producer/task_calls.h"
#include "producer/task_lister.h"
#include "producer/task_placement.h"
#include "redis/redis_error.h"
#include "redis/redis_values.h"

namespace expiry {

struct Producer::State {
  State(const ProducerTarget& target, const ReplicaConfirmation& confirmation)
      : redis(target.redis), confirmer(confirmation) {
    placement.ns = target.ns;
    placement.cluster = redis.cluster();
    placement.stream = target.stream.empty() ? KeyLayout(target.ns).default_stream() : target.stream;
    placement.db = placement.cluster ? 0 : target.redis.db;
    placement.buckets = redis.agree_buckets(target.ns, target.buckets);
  }

  RoutedClient redis;
  TaskPlacement placement;
  ReplicaConfirmer confirmer;
};

namespace {

void check_range(const RangeFilter& filter) {
  if (filter.prefix.empty() && !filter.after_ms && !filter.before_ms) {
    throw ConfigError("a range needs a prefix or a due-time bound");
  }
}

// schedule_many's feed: the tasks of a vector, and their answers in place.
class VectorFeed : public ScheduleFeed {
 public:
  explicit VectorFeed(const std::vector<Task>& tasks) : tasks_(tasks), results_(tasks.size()) {}

  std::optional<Task> next() override {
    if (next_ == tasks_.size()) return std::nullopt;
    return tasks_[next_++];
  }
  void on_answer(const ScheduleAnswer& answer) override {
    if (answer.written()) {
      for (size_t i = 0; i < answer.tasks.size(); ++i) results_[answer.tasks[i]] = answer.results[i];
      written_ += answer.tasks.size();
    } else if (!refusal_) {
      refusal_ = answer;
    }
  }

  // The results in input order; throws ReplyError naming the first refused task.
  std::vector<ScheduleResult> results() const {
    if (!refusal_) return results_;
    const std::string& id = tasks_[refusal_->tasks[refusal_->named]].id;
    const std::string why = refusal_->refusal == ScheduleAnswer::Refusal::NoReply
                                ? "no reply, so its call may or may not have been written: " + refusal_->text
                                : refusal_->text;
    throw ReplyError("task #" + std::to_string(refusal_->tasks[refusal_->named] + 1) + " (id '" + escape_text(id) +
                     "') was refused: " + why + "; " + std::to_string(written_) + " of " +
                     std::to_string(tasks_.size()) + " tasks were written");
  }

 private:
  const std::vector<Task>& tasks_;
  size_t next_ = 0;
  std::vector<ScheduleResult> results_;
  size_t written_ = 0;
  std::optional<ScheduleAnswer> refusal_;
};

}  // namespace

Producer::Producer(const std::map<std::string, std::string>& settings, const ReplicaConfirmation& confirmation)
    : Producer(resolve_producer_target(settings), confirmation) {}

Producer::Producer(std::initializer_list<std::pair<const std::string, std::string>> settings,
                   const ReplicaConfirmation& confirmation)
    : Producer(std::map<std::string, std::string>(settings), confirmation) {}

Producer::Producer(const ProducerTarget& target, const ReplicaConfirmation& confirmation)
    : state_(std::make_unique<State>(target, confirmation)) {}

Producer::~Producer() = default;

const std::string& Producer::ns() const { return state_->placement.ns; }
bool Producer::cluster() const { return state_->placement.cluster; }
int Producer::buckets() const { return state_->placement.buckets; }
RoutedClient& Producer::client() { return state_->redis; }
const TaskPlacement& Producer::placement() const { return state_->placement; }

ScheduleResult Producer::schedule(const Task& task) {
  check_task(task, ns());
  return schedule_reply_result(
      state_->redis.fcall(placement().schedule_argv(task), placement().slot_of_task(task.id)));
}

std::vector<ScheduleResult> Producer::schedule_many(const std::vector<Task>& tasks) {
  for (size_t i = 0; i < tasks.size(); ++i) {
    try {
      check_task(tasks[i], ns());
    } catch (const ConfigError& e) {
      throw ConfigError("task #" + std::to_string(i + 1) + ": " + e.what());
    }
  }
  VectorFeed feed(tasks);
  schedule_stream(feed);
  return feed.results();
}

void Producer::schedule_stream(ScheduleFeed& feed) { stream_schedules(state_->redis, state_->placement, feed); }

std::optional<RescheduleResult> Producer::reschedule(const std::string& id, ScheduleMode mode, long long ms) {
  check_task_id(id);
  if (ms < (mode == ScheduleMode::At ? 1 : 0) || ms > kMaxTimeMs) {
    throw ConfigError(std::string(mode == ScheduleMode::At ? "at_ms" : "delay_ms") + " must be between " +
                      (mode == ScheduleMode::At ? "1" : "0") + " and " + std::to_string(kMaxTimeMs));
  }
  const KeyLayout keys = placement().keys_of_task(id);
  const Reply reply =
      state_->redis.fcall(reschedule_argv(keys, id, mode, ms, placement().db), TaskPlacement::slot_of_bucket(keys.bucket()));
  if (classify(reply) == RedisErrorKind::TaskNotPending) return std::nullopt;
  expect_ok(reply, "FCALL expiry_reschedule");
  const auto result = decode_reschedule(reply);
  if (!result) throw ReplyError("FCALL expiry_reschedule: unexpected reply " + reply.describe());
  return result;
}

bool Producer::cancel(const std::string& id) {
  check_task_id(id);
  return cancel_reply_result(
      state_->redis.fcall(cancel_argv(placement().keys_of_task(id), id), placement().slot_of_task(id)));
}

RangeTotals Producer::cancel_range(const RangeFilter& filter, const RangeProgressFn& progress) {
  check_range(filter);
  return walk_buckets(
      state_->redis, placement(), "FCALL expiry_cancel_range",
      [&](const KeyLayout& keys, const std::string& cursor) {
        return cancel_range_argv(keys, filter, cursor, kRangeCallLimit);
      },
      progress);
}

RunNowResult Producer::run_now(const std::string& id) {
  check_task_id(id);
  const Reply reply =
      state_->redis.fcall(run_now_argv(placement().keys_of_task(id), id, placement().db), placement().slot_of_task(id));
  expect_ok(reply, "FCALL expiry_run_now");
  const auto result = decode_run_now(reply);
  if (!result) throw ReplyError("FCALL expiry_run_now: unexpected reply " + reply.describe());
  return *result;
}

RangeTotals Producer::run_now_range(const RangeFilter& filter, const RangeProgressFn& progress) {
  check_range(filter);
  if (filter.after_ms) throw ConfigError("run-now takes no lower due-time bound: only tasks not yet due are promoted");
  const int db = placement().db;
  return walk_buckets(
      state_->redis, placement(), "FCALL expiry_run_now_range",
      [&](const KeyLayout& keys, const std::string& cursor) {
        return run_now_range_argv(keys, filter, cursor, kRangeCallLimit, db);
      },
      progress);
}

PauseResult Producer::pause(std::chrono::milliseconds duration) {
  if (duration.count() < 0) throw ConfigError("a pause must not be negative");
  // Each bucket's end is on its node's clock: the latest is returned.
  return call_every_bucket(state_->redis, placement(), "FCALL expiry_pause", true,
                           [&](const KeyLayout& keys) { return pause_argv(keys, duration.count()); });
}

PauseResult Producer::resume() {
  const int db = placement().db;
  return call_every_bucket(state_->redis, placement(), "FCALL expiry_resume", false,
                           [&](const KeyLayout& keys) { return resume_argv(keys, db); });
}

ReplicaAcks Producer::confirm_writes(const std::function<void()>& write_again,
                                     const std::function<void(const ReplicaAcks&)>& on_shortfall) {
  return state_->confirmer.confirm(state_->redis, write_again, on_shortfall);
}

TaskDetails Producer::show(const std::string& id) {
  check_task_id(id);
  const KeyLayout keys = placement().keys_of_task(id);
  const int slot = TaskPlacement::slot_of_bucket(keys.bucket());
  // TIME goes to the node of the task's keys: due_in_ms is on that node's clock.
  const auto replies = state_->redis.batch({{slot, {"TIME"}},
                                            {slot, {"ZSCORE", keys.schedule_key(), id}},
                                            {slot, {"HGETALL", keys.shadow_key(id)}},
                                            {slot, {"PTTL", keys.trigger_key(id)}}});
  const Reply& time = replies[0];
  const Reply& score = replies[1];
  const Reply& shadow = replies[2];
  const Reply& pttl = replies[3];
  expect_ok(time, "TIME");
  expect_ok(score, "ZSCORE");
  expect_ok(shadow, "HGETALL");
  expect_ok(pttl, "PTTL");
  const auto now = time_reply_ms(time);
  if (!now) throw ReplyError("TIME: unexpected reply " + time.describe());
  TaskDetails details;
  details.now_ms = *now;
  if (score.type == Reply::Type::Nil) return details;
  const auto due = score_to_ms(score.str);
  if (!due) throw ReplyError("ZSCORE: unexpected reply " + score.describe());
  details.pending = true;
  details.due_ms = *due;
  details.fields = field_pairs(shadow);
  const auto stream = details.field("stream");
  details.default_stream = !stream.has_value();
  details.stream = stream ? *stream : placement().default_stream_of_bucket(keys.bucket());
  details.trigger_pttl_ms = pttl.type == Reply::Type::Integer ? pttl.integer : -2;
  return details;
}

TaskPage Producer::list(const ListQuery& query) { return list_tasks(state_->redis, placement(), query); }

void Producer::list_details(const std::vector<ListedTask>& tasks, size_t payload_head_bytes,
                            const std::function<void(size_t index, const ListedTaskDetails&)>& each) {
  read_listed_details(state_->redis, placement(), tasks, payload_head_bytes, each);
}

long long Producer::now_ms() {
  const Reply time = state_->redis.command({"TIME"}, TaskPlacement::slot_of_bucket(0));
  expect_ok(time, "TIME");
  const auto now = time_reply_ms(time);
  if (!now) throw ReplyError("TIME: unexpected reply " + time.describe());
  return *now;
}

}  // namespace expiry
