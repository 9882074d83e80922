// RFC 9457 problem details of expiry-api (src/api/problem.h).
#include "api/problem.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace expiry {
namespace {

TEST(ApiProblem, HasTypeTitleStatusDetail) {
  const auto j = nlohmann::json::parse(problem_json({404, "task x is not pending"}));
  EXPECT_EQ(j["type"], "about:blank");
  EXPECT_EQ(j["title"], "Not Found");
  EXPECT_EQ(j["status"], 404);
  EXPECT_EQ(j["detail"], "task x is not pending");
  EXPECT_EQ(j.size(), 4u);
}

TEST(ApiProblem, TitlesOfTheStatusesTheApiSends) {
  EXPECT_STREQ(status_title(400), "Bad Request");
  EXPECT_STREQ(status_title(401), "Unauthorized");
  EXPECT_STREQ(status_title(403), "Forbidden");
  EXPECT_STREQ(status_title(405), "Method Not Allowed");
  EXPECT_STREQ(status_title(413), "Content Too Large");
  EXPECT_STREQ(status_title(415), "Unsupported Media Type");
  EXPECT_STREQ(status_title(503), "Service Unavailable");
}

TEST(ApiProblem, InvalidUtf8InDetailIsReplaced) {
  const auto j = nlohmann::json::parse(problem_json({400, "bad \xff byte"}));
  EXPECT_EQ(j["detail"], "bad \xef\xbf\xbd byte");
}

}  // namespace
}  // namespace expiry
