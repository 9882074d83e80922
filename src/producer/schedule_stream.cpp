// See schedule_stream.h.
#include "producer/schedule_stream.h"

#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "functions/function_library.h"
#include "functions/schedule_batch.h"
#include "io/sync/pipeline.h"
#include "io/sync/sync_connection.h"
#include "producer/task_batcher.h"
#include "redis/redis_error.h"

namespace expiry {
namespace {

constexpr size_t kWindow = 512;  // commands in flight per round trip (one task per command)
constexpr size_t kClusterChunk = 4096;  // tasks per ClusterClient::batch (a stop is seen between them)
// expiry_schedule_many calls: tasks per call, and payload bytes per call (so that a file of
// 64 KiB payloads still makes calls of a few ms). By expiry-bench's bulk scenario (100-byte
// payloads, two runs on a busy 2-core VM): 50, 100, 200 and 250 tasks per call within the
// noise of each other (51-55k tasks/s), 500 and 1000 no better; 200 keeps calls near 2-4 ms.
constexpr size_t kBatchTasks = 200;
constexpr size_t kBatchPayloadBytes = 1024 * 1024;
constexpr size_t kBatchWindow = 4;  // calls per round trip, two windows in flight
constexpr size_t kBatchClusterChunk = 16384;  // tasks per ClusterClient::batch of calls

// Marks `answer` refused by `reply` (no reply, an error reply, or one of another shape).
void refuse(ScheduleAnswer& answer, const Reply& reply) {
  if (reply.is_io_error()) {
    answer.refusal = ScheduleAnswer::Refusal::NoReply;
    answer.text = reply.str;
  } else if (reply.type == Reply::Type::Error) {
    answer.refusal = ScheduleAnswer::Refusal::Error;
    answer.text = reply.str;
  } else {
    answer.refusal = ScheduleAnswer::Refusal::Unexpected;
    answer.text = reply.describe();
  }
}

// The answer to one expiry_schedule call of task `number`.
ScheduleAnswer answer_of_task(size_t number, const Reply& reply) {
  ScheduleAnswer answer;
  answer.tasks = {number};
  const auto result = reply.is_io_error() ? std::nullopt : decode_schedule(reply);
  if (result) {
    answer.results = {*result};
  } else {
    refuse(answer, reply);
  }
  return answer;
}

// The answer to one expiry_schedule_many call of `batch`: every task written, or none.
ScheduleAnswer answer_of_batch(const TaskBatch& batch, const Reply& reply) {
  ScheduleAnswer answer;
  answer.batched = true;
  for (const BatchedTask& t : batch.tasks) answer.tasks.push_back(t.index);
  if (auto results = decode_schedule_many(reply, batch.tasks.size())) {
    answer.results = std::move(*results);
    return answer;
  }
  const size_t named = schedule_many_failed_task(reply).value_or(0);
  answer.named = named < batch.tasks.size() ? named : 0;
  refuse(answer, reply);
  return answer;
}

// One run over a feed: numbers its tasks, answers the calls and stops sending after a refusal.
class ScheduleStream {
 public:
  ScheduleStream(RoutedClient& redis, const TaskPlacement& placement, ScheduleFeed& feed)
      : redis_(redis), placement_(placement), feed_(feed), batcher_(kBatchTasks, kBatchPayloadBytes) {}

  void run() {
    if (!redis_.cluster()) {  // loads the library if missing
      expect_ok(redis_.single().fcall({"FCALL", "expiry_version", "0"}), "FCALL expiry_version");
    }
    const bool batched = may_schedule_many();
    if (redis_.cluster()) {
      if (batched) {
        send_batches_to_cluster();
      } else {
        send_tasks_to_cluster();
      }
    } else if (batched) {
      send_batches();
    } else {
      send_tasks();
    }
  }

 private:
  // Whether the Redis user may call expiry_schedule_many: an empty call on bucket 0 (which loads
  // the library where it is missing). NOPERM means the user's ACL names expiry_schedule only
  // (docs/security.md before expiry_schedule_many): such a user schedules one task per call.
  bool may_schedule_many() {
    const KeyLayout keys(placement_.ns, 0);
    const std::vector<std::string> probe = schedule_many_argv(keys, {});
    const Reply reply = redis_.cluster() ? redis_.fcall(probe, TaskPlacement::slot_of_bucket(0))
                                         : redis_.single().fcall(probe);
    if (classify(reply) == RedisErrorKind::NoPermission) return false;
    expect_ok(reply, "FCALL expiry_schedule_many");
    if (!decode_schedule_many(reply, 0)) {
      throw ReplyError("FCALL expiry_schedule_many: unexpected reply " + reply.describe());
    }
    return true;
  }

  std::optional<BatchedTask> next_task() {
    auto task = feed_.next();
    if (!task) return std::nullopt;
    return BatchedTask{numbered_++, std::move(*task)};
  }

  void answer(const ScheduleAnswer& a) {
    if (!a.written()) refused_ = true;
    feed_.on_answer(a);
  }

  // A failure of the connection while sending: the feed may say what was written.
  template <typename Send>
  void sending(Send send) {
    try {
      send();
    } catch (const IoError& e) {
      feed_.on_send_failed(e);
      throw;
    }
  }

  // Sends the commands `next` makes in windows of `window` commands, two in flight, while
  // `may_send` allows, and answers each reply with `answer_of` and the item `next` returned
  // with its command (a task, or a batch of them).
  template <typename Item, typename Next, typename MaySend, typename AnswerOf>
  void send_pipelined(size_t window, Next next, MaySend may_send, AnswerOf answer_of) {
    std::deque<Item> in_flight;  // sent, reply not read yet, in order
    PipelineSteps steps;
    steps.next_command = [&](std::vector<std::string>& argv) {
      std::optional<Item> item = next(argv);
      if (!item) return false;
      in_flight.push_back(std::move(*item));
      return true;
    };
    steps.on_reply = [&](size_t, const Reply& reply) {
      answer(answer_of(in_flight.front(), reply));
      in_flight.pop_front();
    };
    steps.may_send = may_send;
    steps.after_window = [&] { feed_.on_round_trip(); };
    sending([&] { run_pipeline(redis_.single(), PipelineOptions{window, 2}, steps); });
  }

  // One Redis, one task per call, windows of kWindow: a stop is seen between windows.
  void send_tasks() {
    send_pipelined<size_t>(
        kWindow,
        [&](std::vector<std::string>& argv) -> std::optional<size_t> {
          auto task = next_task();
          if (!task) return std::nullopt;
          argv = placement_.schedule_argv(task->task);
          return task->index;
        },
        [&] { return !refused_ && !feed_.stopped(); },
        [](size_t number, const Reply& reply) { return answer_of_task(number, reply); });
  }

  // A cluster, one task per call, in chunks of kClusterChunk pipelined per node. The tasks
  // after a refused one in its chunk were sent too: they are answered.
  void send_tasks_to_cluster() {
    while (!refused_ && !feed_.stopped()) {
      std::vector<ClusterClient::Routed> chunk;
      std::vector<size_t> sent;
      while (chunk.size() < kClusterChunk) {
        auto task = next_task();
        if (!task) break;
        chunk.push_back({placement_.slot_of_task(task->task.id), placement_.schedule_argv(task->task)});
        sent.push_back(task->index);
      }
      if (chunk.empty()) return;
      std::vector<Reply> replies;
      sending([&] { replies = redis_.batch(chunk, &SyncConnection::expiry_library()); });
      for (size_t i = 0; i < replies.size(); ++i) answer(answer_of_task(sent[i], replies[i]));
      feed_.on_round_trip();
    }
  }

  // The next expiry_schedule_many call, per bucket in feed order, or nullopt when nothing more
  // is to be sent. After a stop no more tasks are read, but those read are still handed out
  // (close_all), so the calls sent always cover a prefix of the feed. After a refusal nothing
  // more is.
  std::optional<TaskBatch> next_batch() {
    if (refused_) return std::nullopt;
    while (ready_.empty()) {
      if (!reading()) {
        for (auto& b : batcher_.close_all()) ready_.push_back(std::move(b));
        if (ready_.empty()) return std::nullopt;
        break;
      }
      auto task = next_task();
      if (!task) {
        at_end_ = true;
        continue;
      }
      const int bucket = placement_.bucket_of_task(task->task.id);
      for (auto& b : batcher_.add(bucket, std::move(*task))) ready_.push_back(std::move(b));
    }
    TaskBatch batch = std::move(ready_.front());
    ready_.pop_front();
    return batch;
  }

  // Something read is still to be sent, or more may be read.
  bool more_batches() { return !refused_ && (!ready_.empty() || !batcher_.empty() || reading()); }
  bool reading() { return !at_end_ && !refused_ && !feed_.stopped(); }

  // One Redis, expiry_schedule_many calls in windows of kBatchWindow.
  void send_batches() {
    send_pipelined<TaskBatch>(
        kBatchWindow,
        [&](std::vector<std::string>& argv) -> std::optional<TaskBatch> {
          auto batch = next_batch();
          if (batch) argv = batch->argv(placement_.ns, placement_.db);
          return batch;
        },
        [&] { return more_batches(); }, answer_of_batch);
  }

  // A cluster, expiry_schedule_many calls, kBatchClusterChunk tasks at a time pipelined per
  // node. The calls after a refused one in its chunk were sent too: they are answered.
  void send_batches_to_cluster() {
    while (more_batches()) {
      std::vector<ClusterClient::Routed> chunk;
      std::vector<TaskBatch> sent;
      size_t tasks = 0;
      while (tasks < kBatchClusterChunk) {
        auto batch = next_batch();
        if (!batch) break;
        tasks += batch->tasks.size();
        chunk.push_back({TaskPlacement::slot_of_bucket(batch->bucket), batch->argv(placement_.ns, placement_.db)});
        sent.push_back(std::move(*batch));
      }
      if (chunk.empty()) return;
      std::vector<Reply> replies;
      sending([&] { replies = redis_.batch(chunk, &SyncConnection::expiry_library()); });
      for (size_t i = 0; i < replies.size(); ++i) answer(answer_of_batch(sent[i], replies[i]));
      feed_.on_round_trip();
    }
  }

  RoutedClient& redis_;
  const TaskPlacement& placement_;
  ScheduleFeed& feed_;
  size_t numbered_ = 0;   // tasks handed out by the feed so far
  bool refused_ = false;  // a call was refused: nothing more is sent
  TaskBatcher batcher_;
  std::deque<TaskBatch> ready_;  // closed batches not sent yet
  bool at_end_ = false;          // the feed has no more tasks
};

}  // namespace

void stream_schedules(RoutedClient& redis, const TaskPlacement& placement, ScheduleFeed& feed) {
  ScheduleStream(redis, placement, feed).run();
}

}  // namespace expiry
