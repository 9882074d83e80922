// LaneSchedule: which bucket streams (lanes) a cluster NodeConsumer reads next (node_consumer.h).
// A lane is due when its doorbell rang, when its turn of the safety poll came, after a read that
// filled a batch or failed, and every lane is due at start and whenever the doorbell subscription
// was (re)confirmed or lost. Pure: the NodeConsumer owns the timers and the reads.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

namespace expiry {

class LaneSchedule {
 public:
  // Every lane starts due: each is read once before the consumer waits for its doorbell.
  explicit LaneSchedule(size_t lanes);

  void ring(size_t lane);  // out of range: ignored
  void ring_all();
  // The safety poll's next turn: the next lane in round-robin order becomes due; returns it.
  size_t poll_next();
  bool any_due() const;
  // The lanes due now, in lane order; they are no longer due (the caller reads them).
  std::vector<size_t> take();

  // The safety poll's step: one lane every `period` / `lanes`, so that each lane is read at
  // least once per period and a node's idle reads are spread evenly (never below 1 ms).
  static std::chrono::milliseconds poll_step(std::chrono::milliseconds period, size_t lanes);

 private:
  std::vector<bool> due_;
  size_t cursor_ = 0;  // the lane the next poll_next() makes due
};

}  // namespace expiry
