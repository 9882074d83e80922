// protocol/task_options: the schedule options' argument and the traceparent rule.
#include "functions/task_options.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

constexpr const char* kGood = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(Traceparent, AcceptsTheW3cExample) { EXPECT_FALSE(traceparent_error(kGood)); }

TEST(Traceparent, RefusesMalformedValues) {
  for (std::string bad : {"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                          "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
                          "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
                          "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                          "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"}) {
    EXPECT_TRUE(traceparent_error(bad)) << bad;
  }
}

TEST(TaskOptions, ArgumentListsEachOptionGiven) {
  EXPECT_EQ(task_options_argument({}), "");
  TaskOptions o;
  o.if_absent = true;
  o.max_late_ms = 5000;
  o.traceparent = kGood;
  EXPECT_EQ(task_options_argument(o), std::string("if_absent max_late_ms=5000 traceparent=") + kGood);
  TaskOptions d;
  d.debounce_max_ms = 8000;
  EXPECT_EQ(task_options_argument(d), "debounce_max_ms=8000");
}

TEST(TaskOptions, ErrorsForWhatTheLibraryRefuses) {
  TaskOptions both;
  both.if_absent = true;
  both.debounce_max_ms = 10;
  EXPECT_TRUE(task_options_error(both));
  TaskOptions zero;
  zero.debounce_max_ms = 0;
  EXPECT_TRUE(task_options_error(zero));
  TaskOptions negative;
  negative.max_late_ms = -1;
  EXPECT_TRUE(task_options_error(negative));
  TaskOptions tp;
  tp.traceparent = "nope";
  EXPECT_TRUE(task_options_error(tp));
  TaskOptions fine;
  fine.max_late_ms = 0;
  EXPECT_FALSE(task_options_error(fine));
}

}  // namespace
}  // namespace expiry
