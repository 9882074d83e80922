// See stream_trimmer.h. A pass walks the streams one call at a time; the next pass is armed one
// interval after the last reply, so a slow Redis never has two trims of this relay queued. A
// pass that trimmed nothing and saw no stream change length doubles the wait for the next one,
// up to 2^kIdleTrimBackoffShift intervals or the retention period, whichever is shorter (but at
// least one interval): an idle relay costs Redis almost nothing.
#include "relay/stream_trimmer.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "redis/redis_error.h"

namespace expiry {

std::vector<std::string> trim_argv(const std::string& stream, std::chrono::milliseconds retention, int limit) {
  return {"FCALL", "expiry_v2_trim", "1", stream, std::to_string(retention.count()), std::to_string(limit)};
}

std::optional<TrimResult> decode_trim(const Reply& reply) {
  if (reply.type != Reply::Type::Array || reply.elements.size() != 4) return std::nullopt;
  for (size_t i = 0; i < 3; ++i) {
    if (reply.elements[i].type != Reply::Type::Integer) return std::nullopt;
  }
  if (reply.elements[3].type != Reply::Type::String) return std::nullopt;
  return TrimResult{reply.elements[0].integer, reply.elements[1].integer, reply.elements[2].integer,
                    reply.elements[3].str};
}

StreamTrimmer::StreamTrimmer(EventLoop& loop, FunctionCaller& functions, const RelayConfig& config,
                             std::vector<std::string> streams, RelayStats& stats)
    : functions_(functions),
      config_(config),
      streams_(std::move(streams)),
      stats_(stats),
      timer_(loop, [this] {
        next_ = 0;
        pass_changed_ = false;
        trim_next();
      }) {}

void StreamTrimmer::start() {
  if (stopped_ || config_.stream_trim_interval.count() == 0 || streams_.empty()) return;
  if (timer_.armed() || in_flight_) return;
  // The first pass runs at once, so expiry_relay_stream_length is right from the start.
  timer_.arm(started_ ? config_.stream_trim_interval : std::chrono::milliseconds(0));
  started_ = true;
}

void StreamTrimmer::stop() {
  stopped_ = true;
  timer_.cancel();
}

void StreamTrimmer::trim_next() {
  if (stopped_) return;
  if (next_ >= streams_.size()) {
    idle_passes_ = pass_changed_ ? 0 : std::min(idle_passes_ + 1, kIdleTrimBackoffShift);
    // Never later than one retention period (or one interval, if that is longer) after the last.
    const auto cap = std::max(config_.stream_trim_interval, config_.stream_retention);
    timer_.arm(std::min(config_.stream_trim_interval * (1 << idle_passes_), cap));
    return;
  }
  const std::string& stream = streams_[next_++];
  in_flight_ = true;
  functions_.fcall(trim_argv(stream, config_.stream_retention, kTrimLimit),
                   [this, &stream](const Reply& reply) { on_reply(stream, reply); });
}

void StreamTrimmer::on_reply(const std::string& stream, const Reply& reply) {
  in_flight_ = false;
  if (stopped_) return;
  if (reply.is_io_error()) {
    start();  // the reconnect calls start() again; this pass ends here
    return;
  }
  auto& gauges = stats_.streams[stream];
  if (auto result = decode_trim(reply)) {
    if (result->trimmed > 0 || result->length != gauges.length) pass_changed_ = true;
    gauges.length = result->length;
    if (result->groups == 0) {
      ++gauges.skipped_no_group;
    } else {
      gauges.trimmed += static_cast<uint64_t>(result->trimmed);
    }
    if (result->trimmed > 0) {
      spdlog::debug("trimmed {} entries of {} below {} ({} left)", result->trimmed, stream, result->bound,
                    result->length);
    }
  } else {
    pass_changed_ = true;  // try again at the normal pace
    ++gauges.trim_errors;
    if (classify(reply) == RedisErrorKind::Moved) {
      spdlog::info("trim of {}: {}; the bucket has moved to another node", stream, reply.str);
      if (on_moved_) on_moved_();
    } else if (classify(reply) == RedisErrorKind::NoPermission ||
               reply.str.find("the Redis user may not run") != std::string::npos) {
      if (!warned_no_permission_) {
        spdlog::error("trim of {} refused: {}; the stream grows until the relay's Redis user may run FCALL "
                      "expiry_v2_trim, XINFO GROUPS, XPENDING, XLEN and XTRIM on it (docs/security.md), or "
                      "--stream-trim-interval-ms=0 turns retention off (logged once)",
                      stream, reply.str);
        warned_no_permission_ = true;
      }
    } else {
      spdlog::warn("trim of {} failed: {}; trying again in {} ms", stream, reply.describe(),
                   config_.stream_trim_interval.count());
    }
  }
  trim_next();
}

}  // namespace expiry
