// Unit tests of the did-you-mean suggestions (src/base/did_you_mean.h).
#include "base/did_you_mean.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("schedule", "schedule"), 0u);
  EXPECT_EQ(edit_distance("shedule", "schedule"), 1u);   // one missing
  EXPECT_EQ(edit_distance("scheddule", "schedule"), 1u); // one extra
  EXPECT_EQ(edit_distance("schedula", "schedule"), 1u);  // one wrong
  EXPECT_EQ(edit_distance("shcedule", "schedule"), 1u);  // two swapped
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("Europe/Berln", "Europe/Berlin"), 1u);
}

TEST(EditDistance, IgnoresTheCaseOfAsciiLetters) {
  EXPECT_EQ(edit_distance("europe/berlin", "Europe/Berlin"), 0u);
  EXPECT_EQ(edit_distance("LIST", "list"), 0u);
}

TEST(EditDistance, IsSymmetric) {
  for (const auto& [a, b] : std::vector<std::pair<const char*, const char*>>{
           {"recur", "resume"}, {"pause", "paus"}, {"run-now", "runnow"}, {"America/New_York", "America/NewYork"}}) {
    EXPECT_EQ(edit_distance(a, b), edit_distance(b, a)) << a << " " << b;
  }
}

const std::vector<std::string> kCommands = {"schedule", "reschedule", "cancel", "run-now", "pause", "resume",
                                            "show",     "stats",      "load-functions", "check", "tail",
                                            "list",     "dead",       "recur"};

TEST(ClosestName, SuggestsTheNameMeant) {
  EXPECT_EQ(closest_name("shedule", kCommands), std::optional<std::string>("schedule"));
  EXPECT_EQ(closest_name("lst", kCommands), std::optional<std::string>("list"));
  EXPECT_EQ(closest_name("runnow", kCommands), std::optional<std::string>("run-now"));
  EXPECT_EQ(closest_name("Cancel", kCommands), std::optional<std::string>("cancel"));
  EXPECT_EQ(closest_name("Europe/Berln", {"Europe/Paris", "Europe/Berlin"}), std::optional<std::string>("Europe/Berlin"));
}

TEST(ClosestName, TheFirstOfEquallyCloseNamesWins) {
  EXPECT_EQ(closest_name("stat", {"stats", "start"}), std::optional<std::string>("stats"));
  EXPECT_EQ(closest_name("stat", {"start", "stats"}), std::optional<std::string>("start"));
  // Europe/Bern is as close to Europe/Berln as Europe/Berlin: the order of the list decides.
  EXPECT_EQ(closest_name("Europe/Berln", {"Europe/Berlin", "Europe/Bern"}), std::optional<std::string>("Europe/Berlin"));
}

TEST(ClosestName, NothingWhenNoNameIsCloseOrTheWordIsOne) {
  EXPECT_EQ(closest_name("frobnicate", kCommands), std::nullopt);
  EXPECT_EQ(closest_name("xyz", kCommands), std::nullopt);  // 3 bytes: at most 1 edit
  EXPECT_EQ(closest_name("schedule", kCommands), std::nullopt);
  EXPECT_EQ(closest_name("shedule", {}), std::nullopt);
  EXPECT_EQ(closest_name("", kCommands), std::nullopt);
}

}  // namespace
}  // namespace expiry
