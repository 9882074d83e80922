// See drain_deadline.h.
#include "webhook/drain_deadline.h"

#include <spdlog/spdlog.h>

#include "webhook/drain_timeout.h"

namespace expiry {

DrainDeadline::DrainDeadline(EventLoop& loop, std::chrono::milliseconds timeout, CountHeld held, std::string where)
    : loop_(loop), timeout_(timeout), held_(std::move(held)), where_(std::move(where)),
      timer_(loop, [this] { expire(); }) {}

void DrainDeadline::start() {
  if (started_) return;
  started_ = true;
  started_at_ = std::chrono::steady_clock::now();
  const Held now = held_();
  spdlog::info("draining: waiting up to {} (--drain-timeout) for {} held entries ({} requests in flight)",
               drain_timeout_text(timeout_), now.entries, now.in_flight);
  timer_.arm(timeout_);
}

void DrainDeadline::expire() {
  expired_ = true;
  const Held left = held_();
  spdlog::warn(
      "drain timeout ({}) reached: exiting with {} entries left pending ({} requests in flight, {} queued), "
      "unacknowledged in {}: another member of the group, or this one restarted, reclaims them after "
      "--min-idle-ms",
      drain_timeout_text(timeout_), left.entries, left.in_flight,
      left.entries > left.in_flight ? left.entries - left.in_flight : 0, where_);
  loop_.stop();
}

void DrainDeadline::report() const {
  if (!started_ || expired_) return;
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                          started_at_);
  spdlog::info("drained in {} ms, within the drain timeout ({}): no delivery left in flight",
               took.count(), drain_timeout_text(timeout_));
}

}  // namespace expiry
