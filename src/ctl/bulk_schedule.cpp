// schedule --file: validate the whole input, then send it in pipelined windows. SIGINT and
// SIGTERM stop it between windows: the replies of what was sent are read and counted first.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ctl/bulk_file.h"
#include "ctl/ctl_commands.h"
#include "ctl/stop_signals.h"
#include "io/sync/sync_connection.h"
#include "protocol/errors.h"
#include "protocol/function_library.h"
#include "protocol/key_layout.h"
#include "protocol/text_escape.h"

namespace expiry {
namespace {

constexpr size_t kWindow = 512;  // commands in flight per round trip
constexpr auto kProgressEvery = std::chrono::seconds(1);

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

}  // namespace

int run_bulk_schedule(const CtlTarget& target, const std::string& path) {
  const std::string name = path == "-" ? "stdin" : path;
  auto input = open_input(path);
  const BulkValidation validation = validate_bulk_stream(*input, kMaxBulkErrors, target.ns);
  if (input->bad()) throw ConfigError("cannot read " + name);
  if (!validation.ok()) {
    for (const auto& e : validation.errors) std::cerr << e << "\n";
    if (validation.invalid > validation.errors.size()) {
      std::cerr << "... and " << (validation.invalid - validation.errors.size()) << " more invalid lines\n";
    }
    std::cerr << "expiry-ctl: " << validation.invalid << " invalid line" << (validation.invalid == 1 ? "" : "s")
              << " in " << name << "; nothing was written\n";
    return kExitUsage;
  }
  input->clear();
  input->seekg(0);
  if (!*input) throw ConfigError("cannot rewind " + name);

  const auto start = std::chrono::steady_clock::now();
  const KeyLayout keys(target.ns);
  StopSignals stop;  // from here on a Ctrl-C or SIGTERM stops the writes; it no longer kills
  SyncConnection conn(target.redis);
  expect_ok(conn.fcall({"FCALL", "expiry_version", "0"}), "FCALL expiry_version");  // loads the library if missing

  struct Sent {
    size_t line;
    std::string id;
  };
  const size_t total = validation.tasks;
  size_t written = 0, replaced = 0, rejected = 0;
  size_t last_written_line = 0;  // the line of the last task Redis confirmed
  std::optional<Sent> first_rejected;
  std::string rejection;
  BulkReader reader(*input);
  bool more = true;
  // Appends the next window of up to kWindow tasks and sends it; clears `more` at the end of input.
  auto send_window = [&](std::vector<Sent>& window) {
    window.clear();
    while (more && window.size() < kWindow) {
      auto line = reader.next();
      if (!line) {
        more = false;
        break;
      }
      if (line->kind != BulkLine::Kind::Task) {  // the file changed after validation
        throw ConfigError(name + " changed while it was read: line " + std::to_string(reader.line_number()) + ": " +
                          line->error + "; " + std::to_string(written) + " tasks were confirmed written before");
      }
      conn.append(schedule_request_argv(keys, line->request));
      window.push_back({reader.line_number(), line->request.id});
    }
    if (!window.empty()) conn.flush();
  };
  // Reads the replies of a sent window and tallies them.
  auto read_window = [&](const std::vector<Sent>& window) {
    for (const auto& sent : window) {
      const Reply reply = conn.read_reply();
      if (auto result = decode_schedule(reply)) {
        ++written;
        replaced += result->replaced ? 1 : 0;
        last_written_line = sent.line;
      } else {
        ++rejected;
        if (!first_rejected) {
          first_rejected = sent;
          rejection = reply.type == Reply::Type::Error ? reply.str : "unexpected reply " + reply.describe();
        }
      }
    }
  };

  // Two windows in flight: Redis runs one while this process parses and sends the next.
  std::vector<Sent> in_flight, next;
  in_flight.reserve(kWindow);
  next.reserve(kWindow);
  auto last_progress = start;
  try {
    if (stop.poll() == 0) send_window(in_flight);
    while (!in_flight.empty()) {
      if (!first_rejected && stop.poll() == 0) send_window(next);
      read_window(in_flight);
      std::swap(in_flight, next);
      next.clear();
      if (first_rejected && in_flight.empty()) break;
      if (std::chrono::steady_clock::now() - last_progress >= kProgressEvery) {
        last_progress = std::chrono::steady_clock::now();
        std::cerr << "progress: " << written << "/" << total << " tasks scheduled (" << (written * 100 / total)
                  << "%)\n";
      }
    }
  } catch (const IoError& e) {
    throw IoError(std::string(e.what()) + "; " + std::to_string(written) + " of " + std::to_string(total) +
                  " tasks were confirmed written (those in flight may or may not have been)");
  }
  if (first_rejected) {
    std::cerr << "expiry-ctl: line " << first_rejected->line << " (id " << escape_text(first_rejected->id)
              << "): Redis rejected the task: " << rejection << "\n";
  }
  const size_t not_sent = total - written - rejected;
  if (const int sig = stop.poll(); sig != 0 && not_sent > 0) {
    // Windows go out in file order and every reply was read: without rejections, exactly the
    // tasks up to last_written_line are written.
    std::cerr << "expiry-ctl: interrupted by " << signal_name(sig) << ": " << written << " of " << total
              << " tasks were written";
    if (rejected == 0 && written > 0) {
      std::cerr << " (the tasks up to line " << last_written_line << " of " << name << ")";
    }
    std::cerr << "; the other " << (total - written) << " were not";
    if (rejected > 0) std::cerr << " (" << rejected << " rejected, " << not_sent << " not sent)";
    std::cerr << "\n";
    return sig == SIGINT ? kExitInterrupted : kExitTerminated;
  }
  if (first_rejected) {
    std::cerr << "expiry-ctl: stopped: " << written << " of " << total << " tasks were written, " << rejected
              << " rejected, " << not_sent << " not sent\n";
    return kExitRedisError;
  }
  std::cout << "scheduled " << written << " tasks (" << replaced << " replaced) in " << elapsed_ms(start) << " ms\n";
  return kExitOk;
}

}  // namespace expiry
