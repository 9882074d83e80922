// Stream retention: every stream_trim_interval (up to 32 times that while nothing changes), one FCALL expiry_trim per stream this relay
// forwards into (its configured stream on one Redis, each bucket's NS:{B}:stream otherwise),
// one call in flight at a time. The library trims only entries every consumer group has
// acknowledged and that are older than stream_retention, so a trim never loses a task; a stream
// without a group is never trimmed (counted as skipped). Per-task streams are the producer's:
// the relay does not learn their names, and trims only those trim_streams names (one Redis).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/relay_config.h"
#include "io/event_loop.h"
#include "io/function_caller.h"
#include "redis/reply.h"
#include "relay/relay_stats.h"

namespace expiry {

// Entries one expiry_trim call frees at most while catching up on a long stream (whole stream
// nodes of 100 entries by default); the rest goes at the next passes.
constexpr int kTrimLimit = 10000;
// Passes that change nothing double the wait for the next one, up to 2^this times the interval.
constexpr int kIdleTrimBackoffShift = 5;

// FCALL expiry_v2_trim 1 <stream> <retention_ms> <limit>.
std::vector<std::string> trim_argv(const std::string& stream, std::chrono::milliseconds retention, int limit);

struct TrimResult {
  long long trimmed = 0;  // entries removed by this call
  long long length = 0;   // XLEN after the call
  long long groups = 0;   // consumer groups on the stream (0: nothing was trimmed)
  std::string bound;      // the MINID used ("" when nothing could go)
};
// nullopt for replies of another shape (errors included).
std::optional<TrimResult> decode_trim(const Reply& reply);

class StreamTrimmer {
 public:
  StreamTrimmer(EventLoop& loop, FunctionCaller& functions, const RelayConfig& config,
                std::vector<std::string> streams, RelayStats& stats);
  StreamTrimmer(const StreamTrimmer&) = delete;
  StreamTrimmer& operator=(const StreamTrimmer&) = delete;

  // Arms a pass unless one is armed or running (a no-op when stream_trim_interval is 0): the
  // first at once (so the stream length gauge is right from the start), later ones one interval
  // from now. Called whenever the command connection is (re)prepared.
  void start();
  // No new calls; one in flight still completes.
  void stop();
  bool busy() const { return in_flight_; }
  // Called when Redis answered MOVED: the stream's slot moved to another node.
  void set_on_moved(std::function<void()> fn) { on_moved_ = std::move(fn); }

 private:
  void trim_next();
  void on_reply(const std::string& stream, const Reply& reply);

  bool started_ = false;  // the first pass has been armed

  FunctionCaller& functions_;
  const RelayConfig& config_;
  const std::vector<std::string> streams_;
  RelayStats& stats_;
  std::function<void()> on_moved_;
  Timer timer_;
  size_t next_ = 0;        // index in streams_ of the next call of the current pass
  bool pass_changed_ = false;  // this pass trimmed something or saw a stream's length change
  int idle_passes_ = 0;        // passes in a row that changed nothing (capped at kIdleTrimBackoffShift)
  bool in_flight_ = false;
  bool stopped_ = false;
  bool warned_no_permission_ = false;  // NOPERM is logged once; expiry_relay_stream_trim_errors_total counts the rest
};

}  // namespace expiry
