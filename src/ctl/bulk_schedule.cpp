// schedule --file: validate the whole input (keeping the parsed tasks, up to kKeptTaskBytes, so
// that most files are parsed once), then send it in pipelined windows of
// expiry_schedule_many calls, one bucket per call (or of expiry_schedule calls, one task each,
// for a Redis user who may not call expiry_schedule_many). SIGINT and SIGTERM stop it between
// windows: the tasks already read are sent, and the replies of what was sent are read and
// counted first, so what was written is exactly the first lines of the input.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ctl/bulk_file.h"
#include "ctl/task_batcher.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/stop_signals.h"
#include "io/sync/pipeline.h"
#include "io/sync/routed_client.h"
#include "io/sync/sync_connection.h"
#include "protocol/errors.h"
#include "protocol/function_library.h"
#include "protocol/key_layout.h"
#include "protocol/redis_error.h"
#include "protocol/schedule_batch.h"
#include "protocol/text_escape.h"

namespace expiry {
namespace {

constexpr size_t kWindow = 512;  // commands in flight per round trip (one task per command)
constexpr size_t kClusterChunk = 4096;  // tasks per ClusterClient::batch (a stop signal is seen between them)
// expiry_schedule_many calls: tasks per call, and payload bytes per call (so that a file of
// 64 KiB payloads still makes calls of a few ms). By expiry-bench's bulk scenario (100-byte
// payloads, two runs on a busy 2-core VM): 50, 100, 200 and 250 tasks per call within the
// noise of each other (51-55k tasks/s), 500 and 1000 no better; 200 keeps calls near 2-4 ms.
constexpr size_t kBatchTasks = 200;
constexpr size_t kBatchPayloadBytes = 1024 * 1024;
constexpr size_t kBatchWindow = 4;  // calls per round trip, two windows in flight
constexpr size_t kBatchClusterChunk = 16384;  // tasks per ClusterClient::batch of calls
constexpr auto kProgressEvery = std::chrono::seconds(1);
// The parsed tasks the validation keeps for sending (about 350 bytes per task of 100-byte
// payloads: 300k such tasks); the lines after them are parsed a second time when sent.
constexpr size_t kKeptTaskBytes = 128 * 1024 * 1024;

// Copies `in` into an unlinked temporary file and returns it opened for reading.
std::unique_ptr<std::ifstream> spool(std::istream& in, const std::string& name) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir != nullptr && tmpdir[0] != '\0' ? tmpdir : "/tmp") + "/expiry-ctl-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) throw Error("cannot create a temporary file in " + path.substr(0, path.rfind('/')) + " to spool " + name);
  close(fd);
  struct Unlink {
    std::string path;
    ~Unlink() { unlink(path.c_str()); }  // the open stream keeps the data
  } unlink_at_exit{path};
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) out.write(buf, in.gcount());
    if (in.bad()) throw ConfigError("cannot read " + name);
    out.flush();
    if (!out) throw Error("cannot write the temporary spool file " + path + " (disk full?)");
  }
  auto stream = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*stream) throw Error("cannot reopen the temporary spool file " + path);
  return stream;
}

// `path` opened so it can be read twice; stdin ("-") and pipes are spooled first.
std::unique_ptr<std::ifstream> open_input(const std::string& path) {
  if (path == "-") return spool(std::cin, "stdin");
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw ConfigError("cannot read bulk file " + path + ": no such file");
  if (S_ISDIR(st.st_mode)) throw ConfigError("bulk file " + path + " is a directory");
  if (!S_ISREG(st.st_mode)) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError("cannot read bulk file " + path);
    return spool(in, path);
  }
  auto stream = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*stream) throw ConfigError("cannot read bulk file " + path);
  return stream;
}

long long elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count();
}

// Prints the invalid lines of `name` and why nothing was written.
void report_invalid(const BulkValidation& validation, const std::string& name) {
  for (const auto& e : validation.errors) std::cerr << e << "\n";
  if (validation.invalid > validation.errors.size()) {
    std::cerr << "... and " << (validation.invalid - validation.errors.size()) << " more invalid lines\n";
  }
  std::cerr << "expiry-ctl: " << validation.invalid << " invalid line" << (validation.invalid == 1 ? "" : "s")
            << " in " << name << "; nothing was written\n";
}

void rewind(std::ifstream& input, const std::string& name) {
  input.clear();
  input.seekg(0);
  if (!input) throw ConfigError("cannot rewind " + name);
}

struct SentTask {
  size_t line;
  std::string id;
};

// What Redis answered to the tasks sent.
struct BulkTally {
  size_t total = 0;              // valid tasks in the input
  size_t written = 0;
  size_t replaced = 0;
  size_t kept = 0;               // if_absent found the task pending and left it (counted in written)
  size_t rejected = 0;
  size_t last_written_line = 0;  // the line of the last task Redis confirmed
  std::optional<SentTask> first_rejected;
  std::string rejection;         // Redis's answer to first_rejected

  void count(const SentTask& sent, const Reply& reply) {
    if (reply.is_io_error()) {
      ++rejected;
      if (!first_rejected) {
        first_rejected = sent;
        rejection = "no reply, so it may or may not have been written: " + reply.str;
      }
    } else if (auto result = decode_schedule(reply)) {
      ++written;
      replaced += result->replaced ? 1 : 0;
      kept += result->kept ? 1 : 0;
      last_written_line = sent.line;
    } else {
      ++rejected;
      if (!first_rejected) {
        first_rejected = sent;
        rejection = reply.type == Reply::Type::Error ? reply.str : "unexpected reply " + reply.describe();
      }
    }
  }

  // Counts the reply to one expiry_schedule_many call: every task of `batch` was written, or
  // none was (the task Redis names is the one reported).
  void count(const TaskBatch& batch, const Reply& reply) {
    const auto results = decode_schedule_many(reply, batch.tasks.size());
    if (results) {
      written += results->size();
      for (const auto& r : *results) {
        replaced += r.replaced ? 1 : 0;
        kept += r.kept ? 1 : 0;
      }
      last_written_line = std::max(last_written_line, batch.last_line());
      return;
    }
    rejected += batch.tasks.size();
    if (first_rejected) return;
    const size_t named = schedule_many_failed_task(reply).value_or(0);
    const BatchedTask& task = batch.tasks[named < batch.tasks.size() ? named : 0];
    first_rejected = SentTask{task.line, task.request.id};
    if (reply.is_io_error()) {
      rejection = "no reply, so it and the " + std::to_string(batch.tasks.size() - 1) +
                  " other tasks of its call may or may not have been written: " + reply.str;
    } else if (reply.type == Reply::Type::Error) {
      rejection = reply.str;
      if (batch.tasks.size() > 1) {
        rejection += " (the " + std::to_string(batch.tasks.size() - 1) + " other tasks of its call were not written)";
      }
    } else {
      rejection = "unexpected reply " + reply.describe();
    }
  }
};

// The valid tasks of the input in file order: first those kept by the validation, then the
// rest parsed again from the input (rewound) after skipping the kept lines.
class TaskSource {
 public:
  TaskSource(std::vector<BulkTask> kept, bool kept_all, BulkReader& reader, const std::string& name,
             const BulkTally& tally)
      : kept_(std::move(kept)), kept_all_(kept_all), reader_(reader), name_(name), tally_(tally) {}

  // The next task; nullopt at the end. Throws ConfigError when a line read again no longer
  // validates (the file changed after validation).
  std::optional<BulkTask> next() {
    if (next_kept_ < kept_.size()) return std::move(kept_[next_kept_++]);
    if (kept_all_) return std::nullopt;
    if (!skipped_) {
      skipped_ = true;
      reader_.skip_lines(kept_.empty() ? 0 : kept_.back().line);
      kept_ = {};
      next_kept_ = 0;
    }
    auto line = reader_.next();
    if (!line) return std::nullopt;
    if (line->kind != BulkLine::Kind::Task) {
      throw ConfigError(name_ + " changed while it was read: line " + std::to_string(reader_.line_number()) + ": " +
                        line->error + "; " + std::to_string(tally_.written) + " tasks were confirmed written before");
    }
    return BulkTask{reader_.line_number(), std::move(line->request)};
  }

 private:
  std::vector<BulkTask> kept_;
  size_t next_kept_ = 0;
  bool kept_all_;
  bool skipped_ = false;
  BulkReader& reader_;
  const std::string& name_;
  const BulkTally& tally_;
};

void print_progress(const BulkTally& tally, std::chrono::steady_clock::time_point& last_progress) {
  if (std::chrono::steady_clock::now() - last_progress < kProgressEvery) return;
  last_progress = std::chrono::steady_clock::now();
  std::cerr << "progress: " << tally.written << "/" << tally.total << " tasks scheduled ("
            << (tally.written * 100 / tally.total) << "%)\n";
}

IoError with_counts(const IoError& e, const BulkTally& tally) {
  return IoError(std::string(e.what()) + "; " + std::to_string(tally.written) + " of " + std::to_string(tally.total) +
                 " tasks were confirmed written (those in flight may or may not have been)");
}

// Sends the commands `next` makes in windows of `window` commands, two in flight, while
// `may_send` allows, and counts each reply in `tally` against the item `next` returned with its
// command (a task, or a batch of them). Connection errors are rethrown with the counts so far.
template <typename Item, typename Next, typename MaySend>
void send_counted(SyncConnection& conn, size_t window, BulkTally& tally, Next next, MaySend may_send) {
  std::deque<Item> in_flight;  // sent, reply not read yet, in order
  auto last_progress = std::chrono::steady_clock::now();
  PipelineSteps steps;
  steps.next_command = [&](std::vector<std::string>& argv) {
    std::optional<Item> item = next(argv);
    if (!item) return false;
    in_flight.push_back(std::move(*item));
    return true;
  };
  steps.on_reply = [&](size_t, const Reply& reply) {
    tally.count(in_flight.front(), reply);
    in_flight.pop_front();
  };
  steps.may_send = may_send;
  steps.after_window = [&] { print_progress(tally, last_progress); };
  try {
    run_pipeline(conn, PipelineOptions{window, 2}, steps);
  } catch (const IoError& e) {
    throw with_counts(e, tally);
  }
}

// One Redis: sends every task of `source`, each to its bucket's keys, in windows of kWindow,
// two in flight, until the input ends, a task is rejected or a stop signal arrives; every reply
// of what was sent is read and counted.
void send_tasks(SyncConnection& conn, const CtlLayout& layout, TaskSource& source, StopSignals& stop,
                BulkTally& tally) {
  send_counted<SentTask>(
      conn, kWindow, tally,
      [&](std::vector<std::string>& argv) -> std::optional<SentTask> {
        auto task = source.next();
        if (!task) return std::nullopt;
        argv = schedule_request_argv(layout.keys_of_task(task->request.id), task->request, layout.db);
        return SentTask{task->line, std::move(task->request.id)};
      },
      [&] { return !tally.first_rejected && stop.poll() == 0; });
}

// A cluster: sends the tasks in chunks of kClusterChunk, each chunk pipelined per node
// (ClusterClient::batch, which loads the library where it is missing), until the input ends, a
// task is rejected or a stop signal arrives. The tasks after a rejected one in its chunk were
// sent too: their replies are counted.
void send_tasks_to_cluster(RoutedClient& redis, const CtlLayout& layout, TaskSource& source, StopSignals& stop,
                           BulkTally& tally) {
  auto last_progress = std::chrono::steady_clock::now();
  while (!tally.first_rejected && stop.poll() == 0) {
    std::vector<ClusterClient::Routed> chunk;
    std::vector<SentTask> sent;
    while (chunk.size() < kClusterChunk) {
      auto task = source.next();
      if (!task) break;
      const KeyLayout keys = layout.keys_of_task(task->request.id);
      chunk.push_back({CtlLayout::slot_of_bucket(keys.bucket()), schedule_request_argv(keys, task->request, layout.db)});
      sent.push_back({task->line, std::move(task->request.id)});
    }
    if (chunk.empty()) return;
    std::vector<Reply> replies;
    try {
      replies = redis.batch(chunk, &SyncConnection::expiry_library());
    } catch (const IoError& e) {
      throw with_counts(e, tally);
    }
    for (size_t i = 0; i < replies.size(); ++i) tally.count(sent[i], replies[i]);
    print_progress(tally, last_progress);
  }
}

// The tasks of `tasks` as expiry_schedule_many calls: per bucket, in file order. After a stop
// signal no more lines are read, but the tasks already read are still handed out (close_all),
// so the calls sent always cover a prefix of the input. After a rejection nothing more is.
class BatchSource {
 public:
  BatchSource(const CtlLayout& layout, TaskSource& tasks, StopSignals& stop, const BulkTally& tally)
      : layout_(layout), tasks_(tasks), stop_(stop), tally_(tally), batcher_(kBatchTasks, kBatchPayloadBytes) {}

  // The next call, or nullopt when nothing more is to be sent.
  std::optional<TaskBatch> next() {
    if (tally_.first_rejected) return std::nullopt;
    while (ready_.empty()) {
      if (!reading()) {
        for (auto& b : batcher_.close_all()) ready_.push_back(std::move(b));
        if (ready_.empty()) return std::nullopt;
        break;
      }
      auto task = tasks_.next();
      if (!task) {
        at_end_ = true;
        continue;
      }
      const int bucket = layout_.bucket_of_task(task->request.id);
      for (auto& b : batcher_.add(bucket, {task->line, std::move(task->request)})) ready_.push_back(std::move(b));
    }
    TaskBatch batch = std::move(ready_.front());
    ready_.pop_front();
    return batch;
  }

  // Something read is still to be sent, or more may be read.
  bool more() { return !tally_.first_rejected && (!ready_.empty() || !batcher_.empty() || reading()); }

 private:
  bool reading() { return !at_end_ && !tally_.first_rejected && stop_.poll() == 0; }

  const CtlLayout& layout_;
  TaskSource& tasks_;
  StopSignals& stop_;
  const BulkTally& tally_;
  TaskBatcher batcher_;
  std::deque<TaskBatch> ready_;
  bool at_end_ = false;
};

// One Redis: sends the tasks of `tasks` as expiry_schedule_many calls in windows of
// kBatchWindow calls, two in flight, until the input ends, a call is rejected or a stop signal
// arrives (the tasks read by then are sent); every reply of what was sent is read and counted.
void send_batches(SyncConnection& conn, const CtlLayout& layout, TaskSource& tasks, StopSignals& stop,
                  BulkTally& tally) {
  BatchSource source(layout, tasks, stop, tally);
  send_counted<TaskBatch>(
      conn, kBatchWindow, tally,
      [&](std::vector<std::string>& argv) -> std::optional<TaskBatch> {
        auto batch = source.next();
        if (batch) argv = batch->argv(layout.ns, layout.db);
        return batch;
      },
      [&] { return source.more(); });
}

// A cluster: sends the tasks as expiry_schedule_many calls, kBatchClusterChunk tasks at a time
// pipelined per node (ClusterClient::batch, which loads the library where it is missing), until
// the input ends, a call is rejected or a stop signal arrives. The calls after a rejected one in
// its chunk were sent too: their replies are counted.
void send_batches_to_cluster(RoutedClient& redis, const CtlLayout& layout, TaskSource& tasks, StopSignals& stop,
                             BulkTally& tally) {
  BatchSource source(layout, tasks, stop, tally);
  auto last_progress = std::chrono::steady_clock::now();
  while (source.more()) {
    std::vector<ClusterClient::Routed> chunk;
    std::vector<TaskBatch> sent;
    size_t tasks = 0;
    while (tasks < kBatchClusterChunk) {
      auto batch = source.next();
      if (!batch) break;
      tasks += batch->tasks.size();
      chunk.push_back({CtlLayout::slot_of_bucket(batch->bucket), batch->argv(layout.ns, layout.db)});
      sent.push_back(std::move(*batch));
    }
    if (chunk.empty()) return;
    std::vector<Reply> replies;
    try {
      replies = redis.batch(chunk, &SyncConnection::expiry_library());
    } catch (const IoError& e) {
      throw with_counts(e, tally);
    }
    for (size_t i = 0; i < replies.size(); ++i) tally.count(sent[i], replies[i]);
    print_progress(tally, last_progress);
  }
}

// Whether the Redis user may call expiry_schedule_many: an empty call on bucket 0 (which loads
// the library where it is missing). NOPERM means the user's ACL names expiry_schedule only
// (docs/security.md before expiry_schedule_many): such a user schedules one task per call.
bool may_schedule_many(RoutedClient& redis, const CtlLayout& layout) {
  const KeyLayout keys(layout.ns, 0);
  const std::vector<std::string> probe = schedule_many_argv(keys, {});
  const Reply reply = redis.cluster() ? redis.fcall(probe, CtlLayout::slot_of_bucket(0))
                                      : redis.single().fcall(probe);
  if (classify(reply) == RedisErrorKind::NoPermission) return false;
  expect_ok(reply, "FCALL expiry_schedule_many");
  if (!decode_schedule_many(reply, 0)) throw ReplyError("FCALL expiry_schedule_many: unexpected reply " + reply.describe());
  return true;
}

// Prints how the run ended and returns the exit code.
int report_outcome(const BulkTally& tally, const std::string& name, StopSignals& stop,
                   std::chrono::steady_clock::time_point start) {
  if (tally.first_rejected) {
    std::cerr << "expiry-ctl: line " << tally.first_rejected->line << " (id " << escape_text(tally.first_rejected->id)
              << "): Redis rejected the task: " << tally.rejection << "\n";
  }
  const size_t not_sent = tally.total - tally.written - tally.rejected;
  if (const int sig = stop.poll(); sig != 0 && not_sent > 0) {
    // Windows go out in file order and every reply was read: without rejections, exactly the
    // tasks up to last_written_line are written.
    std::cerr << "expiry-ctl: interrupted by " << signal_name(sig) << ": " << tally.written << " of " << tally.total
              << " tasks were written";
    if (tally.rejected == 0 && tally.written > 0) {
      std::cerr << " (the tasks up to line " << tally.last_written_line << " of " << name << ")";
    }
    std::cerr << "; the other " << (tally.total - tally.written) << " were not";
    if (tally.rejected > 0) std::cerr << " (" << tally.rejected << " rejected, " << not_sent << " not sent)";
    std::cerr << "\n";
    return sig == SIGINT ? kExitInterrupted : kExitTerminated;
  }
  if (tally.first_rejected) {
    std::cerr << "expiry-ctl: stopped: " << tally.written << " of " << tally.total << " tasks were written, "
              << tally.rejected << " rejected, " << not_sent << " not sent\n";
    return kExitRedisError;
  }
  // Kept tasks (if_absent found them pending) are among the scheduled ones: Redis accepted them.
  std::cout << "scheduled " << tally.written << " tasks (" << tally.replaced << " replaced";
  if (tally.kept > 0) std::cout << ", " << tally.kept << " kept";
  std::cout << ") in " << elapsed_ms(start) << " ms\n";
  return kExitOk;
}

}  // namespace

int run_bulk_schedule(const CtlTarget& target, const std::string& path, const ReplicaWait& wait) {
  if (wait.replicas < 0) throw ConfigError("--wait-replicas must not be negative");
  const std::string name = path == "-" ? "stdin" : path;
  auto input = open_input(path);
  BulkValidation validation = validate_bulk_stream(*input, kMaxBulkErrors, target.ns, kKeptTaskBytes);
  if (input->bad()) throw ConfigError("cannot read " + name);
  if (!validation.ok()) {
    report_invalid(validation, name);
    return kExitUsage;
  }
  rewind(*input, name);

  const auto start = std::chrono::steady_clock::now();
  StopSignals stop;  // from here on a Ctrl-C or SIGTERM stops the writes; it no longer kills
  CtlSession session(target);
  BulkTally tally;
  tally.total = validation.tasks;
  // Writes every task of the file; a second call (confirm_writes, through Sentinel) reads the
  // file again and writes it all again, which replaces each task by id.
  const auto write_all = [&](std::vector<BulkTask> kept, bool kept_all) {
    BulkReader reader(*input);
    TaskSource tasks(std::move(kept), kept_all, reader, name, tally);
    if (!session.redis.cluster()) {  // loads the library if missing
      expect_ok(session.redis.single().fcall({"FCALL", "expiry_version", "0"}), "FCALL expiry_version");
    }
    const bool batched = may_schedule_many(session.redis, session.layout);
    if (session.redis.cluster()) {
      if (batched) {
        send_batches_to_cluster(session.redis, session.layout, tasks, stop, tally);
      } else {
        send_tasks_to_cluster(session.redis, session.layout, tasks, stop, tally);
      }
    } else if (batched) {
      send_batches(session.redis.single(), session.layout, tasks, stop, tally);
    } else {
      send_tasks(session.redis.single(), session.layout, tasks, stop, tally);
    }
  };
  write_all(std::move(validation.kept), validation.kept_all);
  const int code = report_outcome(tally, name, stop, start);
  if (code != kExitOk || tally.written == 0) return code;
  return confirm_writes(session.redis, wait, [&] {
    rewind(*input, name);
    tally = BulkTally{};
    tally.total = validation.tasks;
    write_all({}, false);
    std::cout << "wrote the " << tally.written << " tasks again\n";
  });
}

}  // namespace expiry
