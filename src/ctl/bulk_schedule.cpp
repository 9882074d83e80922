// schedule --file: validate the whole input (keeping the parsed tasks, up to kKeptTaskBytes, so
// that most files are parsed once), then send it through Producer::schedule_stream (pipelined
// expiry_schedule_many calls, one bucket per call, or expiry_schedule calls for a Redis user who
// may not call expiry_schedule_many: producer/schedule_stream.h). SIGINT and SIGTERM stop the
// reading: the tasks already read are sent, and the replies of what was sent are read and
// counted first, so what was written is exactly the first lines of the input.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "base/text_escape.h"
#include "ctl/bulk_file.h"
#include "ctl/ctl_commands.h"
#include "ctl/ctl_session.h"
#include "ctl/stop_signals.h"
#include "producer/producer.h"
#include "producer/schedule_feed.h"

namespace expiry {
namespace {

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

  // Counts the answer to one call of `sent` (its tasks, in the call's order): an
  // expiry_schedule_many call wrote every task or none (the task Redis names is the one reported).
  void count(const ScheduleAnswer& answer, const std::vector<SentTask>& sent) {
    if (answer.written()) {
      written += sent.size();
      for (const auto& r : answer.results) {
        replaced += r.replaced ? 1 : 0;
        kept += r.kept ? 1 : 0;
      }
      last_written_line = std::max(last_written_line, sent.back().line);
      return;
    }
    rejected += sent.size();
    if (first_rejected) return;
    first_rejected = sent[answer.named];
    const std::string others = std::to_string(sent.size() - 1);
    switch (answer.refusal) {
      case ScheduleAnswer::Refusal::NoReply:
        rejection = answer.batched ? "no reply, so it and the " + others +
                                         " other tasks of its call may or may not have been written: " + answer.text
                                   : "no reply, so it may or may not have been written: " + answer.text;
        break;
      case ScheduleAnswer::Refusal::Error:
        rejection = answer.text;
        if (answer.batched && sent.size() > 1) rejection += " (the " + others + " other tasks of its call were not written)";
        break;
      default:
        rejection = "unexpected reply " + answer.text;
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

// The tasks of a TaskSource as Producer::schedule_stream pulls them, and its answers counted in
// a BulkTally (the tasks in flight remembered by their number).
class BulkFeed : public ScheduleFeed {
 public:
  BulkFeed(TaskSource& source, StopSignals& stop, BulkTally& tally) : source_(source), stop_(stop), tally_(tally) {}

  std::optional<Task> next() override {
    auto task = source_.next();
    if (!task) return std::nullopt;
    in_flight_.emplace(numbered_++, SentTask{task->line, task->request.id});
    return std::move(task->request);
  }
  bool stopped() override { return stop_.poll() != 0; }
  void on_answer(const ScheduleAnswer& answer) override {
    std::vector<SentTask> sent;
    sent.reserve(answer.tasks.size());
    for (const size_t number : answer.tasks) {
      const auto it = in_flight_.find(number);
      sent.push_back(std::move(it->second));
      in_flight_.erase(it);
    }
    tally_.count(answer, sent);
  }
  void on_round_trip() override { print_progress(tally_, last_progress_); }
  void on_send_failed(const IoError& error) override { throw with_counts(error, tally_); }

 private:
  TaskSource& source_;
  StopSignals& stop_;
  BulkTally& tally_;
  size_t numbered_ = 0;
  std::unordered_map<size_t, SentTask> in_flight_;  // handed out, not answered yet
  std::chrono::steady_clock::time_point last_progress_ = std::chrono::steady_clock::now();
};

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
  CtlSession session(target, wait);
  BulkTally tally;
  tally.total = validation.tasks;
  // Writes every task of the file; a second call (confirm_writes, through Sentinel) reads the
  // file again and writes it all again, which replaces each task by id.
  const auto write_all = [&](std::vector<BulkTask> kept, bool kept_all) {
    BulkReader reader(*input);
    TaskSource tasks(std::move(kept), kept_all, reader, name, tally);
    BulkFeed feed(tasks, stop, tally);
    session.producer.schedule_stream(feed);
  };
  write_all(std::move(validation.kept), validation.kept_all);
  const int code = report_outcome(tally, name, stop, start);
  if (code != kExitOk || tally.written == 0) return code;
  return confirm_writes(session, wait, [&] {
    rewind(*input, name);
    tally = BulkTally{};
    tally.total = validation.tasks;
    write_all({}, false);
    std::cout << "wrote the " << tally.written << " tasks again\n";
  });
}

}  // namespace expiry
