// See lane_schedule.h.
#include "consumer/lane_schedule.h"

#include <algorithm>

namespace expiry {

LaneSchedule::LaneSchedule(size_t lanes) : due_(lanes, true) {}

void LaneSchedule::ring(size_t lane) {
  if (lane < due_.size()) due_[lane] = true;
}

void LaneSchedule::ring_all() { std::fill(due_.begin(), due_.end(), true); }

size_t LaneSchedule::poll_next() {
  if (due_.empty()) return 0;
  const size_t lane = cursor_;
  cursor_ = (cursor_ + 1) % due_.size();
  due_[lane] = true;
  return lane;
}

bool LaneSchedule::any_due() const { return std::find(due_.begin(), due_.end(), true) != due_.end(); }

std::vector<size_t> LaneSchedule::take() {
  std::vector<size_t> out;
  for (size_t i = 0; i < due_.size(); ++i) {
    if (due_[i]) out.push_back(i);
    due_[i] = false;
  }
  return out;
}

std::chrono::milliseconds LaneSchedule::poll_step(std::chrono::milliseconds period, size_t lanes) {
  const std::chrono::milliseconds step =
      lanes == 0 ? period : std::chrono::milliseconds(period.count() / static_cast<long long>(lanes));
  return std::max(step, std::chrono::milliseconds(1));
}

}  // namespace expiry
