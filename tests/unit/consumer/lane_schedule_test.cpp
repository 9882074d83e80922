// LaneSchedule: which bucket streams a cluster NodeConsumer reads next.
#include "consumer/lane_schedule.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

namespace expiry {
namespace {

using namespace std::chrono_literals;
using Lanes = std::vector<size_t>;

TEST(LaneSchedule, EveryLaneIsDueAtStartThenNoneUntilRung) {
  LaneSchedule s(3);
  EXPECT_TRUE(s.any_due());
  EXPECT_EQ(s.take(), (Lanes{0, 1, 2}));
  EXPECT_FALSE(s.any_due());
  EXPECT_EQ(s.take(), Lanes{});
}

TEST(LaneSchedule, ARingMakesOnlyItsLaneDueOnce) {
  LaneSchedule s(4);
  s.take();
  s.ring(2);
  s.ring(2);
  s.ring(9);  // out of range: ignored
  EXPECT_EQ(s.take(), Lanes{2});
  EXPECT_EQ(s.take(), Lanes{});
}

TEST(LaneSchedule, RingAllAfterALostSubscription) {
  LaneSchedule s(3);
  s.take();
  s.ring_all();
  EXPECT_EQ(s.take(), (Lanes{0, 1, 2}));
}

TEST(LaneSchedule, TheSafetyPollVisitsEveryLaneInTurn) {
  LaneSchedule s(3);
  s.take();
  Lanes polled;
  for (int i = 0; i < 7; ++i) {
    polled.push_back(s.poll_next());
    EXPECT_EQ(s.take(), Lanes{polled.back()});
  }
  EXPECT_EQ(polled, (Lanes{0, 1, 2, 0, 1, 2, 0}));
}

TEST(LaneSchedule, NoLanesIsHarmless) {
  LaneSchedule s(0);
  EXPECT_FALSE(s.any_due());
  EXPECT_EQ(s.poll_next(), 0u);
  EXPECT_EQ(s.take(), Lanes{});
}

TEST(LaneSchedule, PollStepSpreadsThePeriodOverTheLanes) {
  // 64 buckets over 3 primaries, 30 s: a node of 22 lanes reads one every 1363 ms (0.73 reads/s).
  EXPECT_EQ(LaneSchedule::poll_step(30000ms, 22), 1363ms);
  EXPECT_EQ(LaneSchedule::poll_step(30000ms, 1), 30000ms);
  EXPECT_EQ(LaneSchedule::poll_step(30000ms, 0), 30000ms);
  EXPECT_EQ(LaneSchedule::poll_step(10ms, 64), 1ms);  // never below 1 ms
}

}  // namespace
}  // namespace expiry
