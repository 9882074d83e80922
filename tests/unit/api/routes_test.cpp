// The routes of expiry-api (src/api/routes.h): scopes, 404, 405 with Allow, and task ids as
// percent-decoded path segments checked by the id rules.
#include "api/routes.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(ApiRoutes, EachRouteAndItsScope) {
  struct Case {
    const char* method;
    const char* path;
    Route route;
    std::optional<Scope> scope;
  };
  const Case cases[] = {
      {"GET", "/healthz", Route::Healthz, std::nullopt},
      {"GET", "/readyz", Route::Readyz, std::nullopt},
      {"GET", "/metrics", Route::Metrics, std::nullopt},
      {"GET", "/v1/openapi.json", Route::OpenApi, std::nullopt},
      {"PUT", "/v1/tasks/t1", Route::TaskPut, Scope::Write},
      {"GET", "/v1/tasks/t1", Route::TaskGet, Scope::Read},
      {"DELETE", "/v1/tasks/t1", Route::TaskDelete, Scope::Write},
      {"POST", "/v1/tasks/t1/run-now", Route::TaskRunNow, Scope::Write},
      {"GET", "/v1/tasks", Route::TaskList, Scope::Read},
      {"GET", "/v1/stats", Route::Stats, Scope::Read},
      {"POST", "/v1/pause", Route::Pause, Scope::Admin},
      {"POST", "/v1/resume", Route::Resume, Scope::Admin},
      {"GET", "/v1/dead", Route::DeadList, Scope::Read},
      {"POST", "/v1/dead/replay", Route::DeadReplay, Scope::Admin},
      {"POST", "/v1/dead/purge", Route::DeadPurge, Scope::Admin},
      {"GET", "/v1/whoami", Route::WhoAmI, Scope::Read},
      {"GET", "/v1/overview", Route::Overview, Scope::Read},
      {"GET", "/v1/timeline", Route::Timeline, Scope::Read},
      {"GET", "/v1/recurring", Route::Recurring, Scope::Read},
      {"GET", "/v1/tasks/t1/state", Route::TaskState, Scope::Read},
      {"POST", "/v1/tasks/t1/reschedule", Route::TaskReschedule, Scope::Write},
      {"GET", "/", Route::ConsoleFile, std::nullopt},
      {"GET", "/console/app.js", Route::ConsoleFile, std::nullopt},
      {"GET", "/v1/schedules", Route::ScheduleList, Scope::Read},
      {"POST", "/v1/schedules/preview", Route::SchedulePreviewRule, Scope::Read},
      {"PUT", "/v1/schedules/s1", Route::SchedulePut, Scope::Write},
      {"GET", "/v1/schedules/s1", Route::ScheduleGet, Scope::Read},
      {"DELETE", "/v1/schedules/s1", Route::ScheduleDelete, Scope::Write},
      {"POST", "/v1/schedules/s1/pause", Route::SchedulePause, Scope::Write},
      {"POST", "/v1/schedules/s1/resume", Route::ScheduleResume, Scope::Write},
      {"GET", "/v1/schedules/s1/preview", Route::SchedulePreview, Scope::Read},
      {"POST", "/v1/tasks/batch", Route::TaskBatch, Scope::Write},
      {"POST", "/v1/tasks/cancel", Route::TaskCancelRange, Scope::Write},
      {"POST", "/v1/tasks/run-now", Route::TaskRunNowRange, Scope::Write},
  };
  for (const Case& c : cases) {
    const RouteMatch m = match_route(c.method, c.path);
    ASSERT_TRUE(m.route) << c.method << " " << c.path << ": " << m.detail;
    EXPECT_EQ(*m.route, c.route) << c.path;
    EXPECT_EQ(m.scope, c.scope) << c.path;
  }
}

TEST(ApiRoutes, UnknownPathIs404) {
  for (const char* path : {"/v1", "/v2/tasks", "/v1/tasks/a/b", "/v1/task/a", "/healthz/x", "/v1/tasks/a/run",
                           "/v1/schedules/a/b", "/v1/schedules/a/b/c"}) {
    const RouteMatch m = match_route("GET", path);
    EXPECT_FALSE(m.route) << path;
    EXPECT_EQ(m.status, 404) << path;
    EXPECT_EQ(m.label, "other");
  }
}

TEST(ApiRoutes, WrongMethodIs405WithAllow) {
  RouteMatch m = match_route("POST", "/v1/tasks/t1");
  EXPECT_EQ(m.status, 405);
  EXPECT_EQ(m.allow, "GET, HEAD, PUT, DELETE");
  EXPECT_EQ(m.label, "/v1/tasks/{id}");
  m = match_route("GET", "/v1/pause");
  EXPECT_EQ(m.status, 405);
  EXPECT_EQ(m.allow, "POST");
  EXPECT_EQ(match_route("DELETE", "/v1/tasks").status, 405);
  EXPECT_EQ(match_route("HEAD", "/v1/pause").status, 405) << "HEAD only where there is a GET";
}

// HEAD wherever there is a GET: the same route and scope (evhttp sends no body).
TEST(ApiRoutes, HeadIsGetWithoutTheBody) {
  for (const char* path : {"/healthz", "/readyz", "/metrics", "/", "/v1/tasks/t1", "/v1/stats"}) {
    const RouteMatch get = match_route("GET", path);
    const RouteMatch head = match_route("HEAD", path);
    ASSERT_TRUE(get.route) << path;
    ASSERT_TRUE(head.route) << path;
    EXPECT_EQ(*head.route, *get.route) << path;
    EXPECT_EQ(head.scope, get.scope) << path;
  }
}

TEST(ApiRoutes, IdsArePercentDecodedAndChecked) {
  RouteMatch m = match_route("GET", "/v1/tasks/order%2F42%20x");
  ASSERT_TRUE(m.route);
  EXPECT_EQ(m.id, "order/42 x");
  m = match_route("POST", "/v1/tasks/caf%C3%A9/run-now");
  ASSERT_TRUE(m.route);
  EXPECT_EQ(m.id, "caf\xc3\xa9");
  EXPECT_EQ(match_route("GET", "/v1/tasks/a%0Ab").status, 400);  // a control character
  EXPECT_EQ(match_route("GET", "/v1/tasks/a%ZZ").status, 400);   // a malformed escape
  EXPECT_EQ(match_route("GET", "/v1/tasks/a%2").status, 400);
  EXPECT_EQ(match_route("GET", "/v1/tasks/%FF").status, 400);  // not UTF-8
  EXPECT_EQ(match_route("GET", "/v1/tasks/" + std::string(257, 'x')).status, 400);
  EXPECT_TRUE(match_route("GET", "/v1/tasks/" + std::string(256, 'x')).route);
  EXPECT_EQ(match_route("GET", "/v1/tasks/").status, 400);  // empty id
}

TEST(ApiRoutes, ConsoleFilesNeedNoTokenAndNameTheirFile) {
  RouteMatch m = match_route("GET", "/");
  EXPECT_EQ(m.id, "index.html");
  EXPECT_EQ(m.label, "/");
  m = match_route("GET", "/console/app.css");
  EXPECT_EQ(m.id, "app.css");
  EXPECT_EQ(m.label, "/console/{file}");
  EXPECT_FALSE(m.scope);
  m = match_route("POST", "/");
  EXPECT_FALSE(m.route);
  EXPECT_EQ(m.status, 405);
  EXPECT_EQ(match_route("GET", "/console/").status, 404);
  EXPECT_EQ(match_route("GET", "/console/a/b").status, 404);
}

TEST(ApiRoutes, TaskStateAndRescheduleTakeTheDecodedId) {
  RouteMatch m = match_route("GET", "/v1/tasks/order%2F42/state");
  ASSERT_TRUE(m.route);
  EXPECT_EQ(m.id, "order/42");
  m = match_route("GET", "/v1/tasks/t1/reschedule");
  EXPECT_EQ(m.status, 405);
  EXPECT_EQ(m.allow, "POST");
  EXPECT_EQ(match_route("GET", "/v1/tasks/t1/other").status, 404);
}

TEST(ApiRoutes, ScheduleIdsAreDecodedAndCheckedLikeTaskIds) {
  RouteMatch m = match_route("PUT", "/v1/schedules/daily%2Freport");
  ASSERT_TRUE(m.route);
  EXPECT_EQ(m.id, "daily/report");
  EXPECT_EQ(m.label, "/v1/schedules/{id}");
  m = match_route("GET", "/v1/schedules/%zz");
  EXPECT_FALSE(m.route);
  EXPECT_EQ(m.status, 400);
  EXPECT_NE(m.detail.find("schedule id"), std::string::npos) << m.detail;
  m = match_route("GET", "/v1/schedules/preview");
  EXPECT_EQ(m.status, 405) << "the id preview names the offline preview";
}

// A task may be named batch, cancel or run-now: only POST reaches the bulk routes.
TEST(ApiRoutes, BulkRoutesArePostOnlyAndLeaveTasksOfTheirNames) {
  for (const char* name : {"batch", "cancel", "run-now"}) {
    const std::string path = std::string("/v1/tasks/") + name;
    RouteMatch m = match_route("POST", path);
    ASSERT_TRUE(m.route) << path << ": " << m.detail;
    EXPECT_EQ(m.label, path);
    EXPECT_EQ(m.scope, Scope::Write);
    EXPECT_TRUE(m.id.empty());
    for (const auto& [method, route] : {std::pair{"GET", Route::TaskGet}, std::pair{"HEAD", Route::TaskGet},
                                        std::pair{"PUT", Route::TaskPut}, std::pair{"DELETE", Route::TaskDelete}}) {
      m = match_route(method, path);
      ASSERT_TRUE(m.route) << method << " " << path;
      EXPECT_EQ(*m.route, route) << method << " " << path;
      EXPECT_EQ(m.id, name);
      EXPECT_EQ(m.label, "/v1/tasks/{id}");
    }
    m = match_route("PATCH", path);
    EXPECT_EQ(m.status, 405);
    EXPECT_EQ(m.allow, "GET, HEAD, PUT, DELETE, POST");
  }
  // The run-now of the task named run-now, and POST of other ids, are as before.
  RouteMatch m = match_route("POST", "/v1/tasks/run-now/run-now");
  ASSERT_TRUE(m.route);
  EXPECT_EQ(*m.route, Route::TaskRunNow);
  EXPECT_EQ(m.id, "run-now");
  m = match_route("POST", "/v1/tasks/batches");
  EXPECT_EQ(m.status, 405);
  EXPECT_EQ(m.allow, "GET, HEAD, PUT, DELETE");
  EXPECT_EQ(match_route("POST", "/v1/tasks/batch/x").status, 404);
}

}  // namespace
}  // namespace expiry
