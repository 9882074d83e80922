// functions/wake_message.h: the wake message "<due_ms>[@<db>]" and which relay acts on it.
#include <gtest/gtest.h>

#include "functions/wake_message.h"

namespace expiry {
namespace {

TEST(WakeMessage, ReadsTheDueTimeAlone) {
  const auto wake = parse_wake_message("1764112345678");
  ASSERT_TRUE(wake);
  EXPECT_EQ(wake->due_ms, 1764112345678);
  EXPECT_FALSE(wake->db);
  EXPECT_EQ(parse_wake_message("123")->due_ms, 123);
}

TEST(WakeMessage, ReadsTheDueTimeAndDatabase) {
  const auto zero = parse_wake_message("123@0");
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->due_ms, 123);
  EXPECT_EQ(zero->db, 0);
  const auto three = parse_wake_message("1764112345678@3");
  ASSERT_TRUE(three);
  EXPECT_EQ(three->due_ms, 1764112345678);
  EXPECT_EQ(three->db, 3);
  EXPECT_EQ(parse_wake_message("123@1000000")->db, kMaxWakeDb);
}

TEST(WakeMessage, RejectsEverythingElse) {
  for (const char* bad : {"", "x", "123x", "@", "123@", "@3", "123@-1", "123@-0", "123@+1", "123@ 1", "123@1 ",
                          "123@3@4", "123@3x", "123@1.5", "123@1000001", "123@99999999999999999999",
                          "99999999999999999999", "99999999999999999999@0", " 123", "12 3@0"}) {
    EXPECT_FALSE(parse_wake_message(bad)) << bad;
  }
}

TEST(WakeMessage, IsForItsOwnDatabaseOrAnyWhenItNamesNone) {
  EXPECT_TRUE(wake_is_for_db(*parse_wake_message("123"), 0));
  EXPECT_TRUE(wake_is_for_db(*parse_wake_message("123"), 5));
  EXPECT_TRUE(wake_is_for_db(*parse_wake_message("123@0"), 0));
  EXPECT_FALSE(wake_is_for_db(*parse_wake_message("123@1"), 0));
  EXPECT_TRUE(wake_is_for_db(*parse_wake_message("123@1"), 1));
}

}  // namespace
}  // namespace expiry
