// The API's routes: which handler a method and path reach, the scope each needs, and the
// task id of /v1/tasks/{id} (a percent-decoded path segment), or the console file a path names.
// Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/tokens.h"

namespace expiry {

enum class Route {
  Healthz,
  Readyz,
  Metrics,
  OpenApi,
  TaskPut,
  TaskGet,
  TaskDelete,
  TaskRunNow,
  TaskList,
  // Many tasks per call (docs/api.md, "Batches and bulk actions"): POST only, so that GET, PUT
  // and DELETE of /v1/tasks/batch, /cancel and /run-now still address the tasks so named.
  TaskBatch,        // POST /v1/tasks/batch
  TaskCancelRange,  // POST /v1/tasks/cancel
  TaskRunNowRange,  // POST /v1/tasks/run-now
  Stats,
  Pause,
  Resume,
  DeadList,
  DeadReplay,
  // The web console's reads and actions (docs/api.md, "Web console").
  WhoAmI,
  Overview,
  Timeline,
  Recurring,
  TaskState,
  TaskReschedule,
  DeadPurge,
  // Recurring schedules (docs/api.md, "Recurring schedules"), as `expiry-ctl recur` writes them.
  ScheduleList,         // GET /v1/schedules
  SchedulePreviewRule,  // POST /v1/schedules/preview: a rule not stored
  ScheduleGet,
  SchedulePut,
  ScheduleDelete,
  SchedulePause,
  ScheduleResume,
  SchedulePreview,      // GET /v1/schedules/{id}/preview
  Audit,                // GET /v1/audit: the audit trail (docs/api.md, "Audit trail")
  ConsoleFile,  // GET / and /console/<file>: the console's files, no token
};

struct RouteMatch {
  std::optional<Route> route;  // nullopt: `status` says why (404 no such path, 405 wrong method, 400 bad id)
  int status = 0;
  std::string detail;          // why, when there is no route
  std::string allow;           // 405: the methods the path takes ("GET, PUT, DELETE")
  std::string label;           // the path template, for metrics ("/v1/tasks/{id}"; "other" when unknown)
  std::optional<Scope> scope;  // the scope the route needs; nullopt: no token needed
  std::string id;              // the task or schedule id of /v1/tasks/{id}... and /v1/schedules/{id}...,
                               // decoded and valid; ConsoleFile: the file's name
};

// Matches `method` ("GET", ...) and `path` (the request path as sent, without its query).
RouteMatch match_route(std::string_view method, std::string_view path);

}  // namespace expiry
