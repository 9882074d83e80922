// The pure parts of the console's API: timeline bars and percentiles (inspector/timeline_ranges.h),
// the built-in files and their headers.
#include "api/console_views.h"
#include "inspector/timeline_ranges.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(ConsoleViews, TimelineBarsTileTheRangeWithoutOverlap) {
  const auto bars = timeline_bounds(1000, {"minute", 5000, 3});
  ASSERT_EQ(bars.size(), 3u);
  EXPECT_EQ(bars[0], std::make_pair(std::string("(1000"), std::string("6000")));
  EXPECT_EQ(bars[1], std::make_pair(std::string("(6000"), std::string("11000")));
  EXPECT_EQ(bars[2], std::make_pair(std::string("(11000"), std::string("16000")));
}

TEST(ConsoleViews, TheRangesCoverAMinuteAnHourAndADay) {
  EXPECT_EQ(kTimelineRanges[0].step_ms * kTimelineRanges[0].steps, 60'000);
  EXPECT_EQ(kTimelineRanges[1].step_ms * kTimelineRanges[1].steps, 3'600'000);
  EXPECT_EQ(kTimelineRanges[2].step_ms * kTimelineRanges[2].steps, 86'400'000);
}

TEST(ConsoleViews, PercentilesAreNearestRank) {
  EXPECT_FALSE(percentile({}, 50));
  EXPECT_EQ(percentile({7}, 99), 7);
  EXPECT_EQ(percentile({5, 1, 4, 2, 3}, 50), 3);
  std::vector<long long> hundred;
  for (long long i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_EQ(percentile(hundred, 99), 99);
  EXPECT_EQ(percentile(hundred, 100), 100);
}

TEST(ConsoleViews, FilesAreBuiltInWithTheirTypes) {
  const auto index = console_file("index.html");
  ASSERT_TRUE(index);
  EXPECT_EQ(std::string(index->content_type), "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("data-testid=\"login-token\""), std::string_view::npos);
  // No inline script: the policy allows scripts from files of this origin only.
  EXPECT_EQ(index->body.find("<script>"), std::string_view::npos);
  ASSERT_TRUE(console_file("app.js"));
  EXPECT_EQ(std::string(console_file("app.js")->content_type), "text/javascript; charset=utf-8");
  ASSERT_TRUE(console_file("app.css"));
  EXPECT_FALSE(console_file("../CMakeLists.txt"));
  EXPECT_FALSE(console_file(""));
}

TEST(ConsoleViews, ThePolicyAllowsNothingInlineNorForeign) {
  std::string policy;
  for (const auto& [name, value] : console_headers()) {
    if (name == "Content-Security-Policy") policy = value;
  }
  EXPECT_NE(policy.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(policy.find("script-src 'self'"), std::string::npos);
  EXPECT_NE(policy.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_EQ(policy.find("unsafe"), std::string::npos);
}

}  // namespace
}  // namespace expiry
