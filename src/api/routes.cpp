// See routes.h.
#include "api/routes.h"

#include <vector>

#include "base/percent_encoding.h"
#include "functions/key_layout.h"

namespace expiry {
namespace {

std::vector<std::string_view> segments_of(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path.front() != '/') return out;
  path.remove_prefix(1);
  while (true) {
    const size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// One path's methods: the route and scope of each.
struct MethodRoute {
  const char* method;
  Route route;
  std::optional<Scope> scope;
};

RouteMatch pick(std::string_view method, const std::string& label, std::initializer_list<MethodRoute> routes) {
  RouteMatch m;
  m.label = label;
  // HEAD is GET without the body (RFC 9110 9.3.2): the same route and scope; evhttp sends no body.
  const bool head = method == "HEAD";
  for (const MethodRoute& r : routes) {
    if (method == r.method || (head && std::string_view(r.method) == "GET")) {
      m.route = r.route;
      m.scope = r.scope;
      return m;
    }
  }
  m.status = 405;
  for (const MethodRoute& r : routes) {
    m.allow += (m.allow.empty() ? "" : ", ") + std::string(r.method);
    if (std::string_view(r.method) == "GET") m.allow += ", HEAD";
  }
  m.detail = "method " + std::string(method) + " is not allowed on " + label + " (allowed: " + m.allow + ")";
  return m;
}

// `m` with the id of its path segment `segment` (percent-decoded and checked), or a 400 naming
// what is wrong with it. A match without a route is returned as it is.
RouteMatch with_id(RouteMatch m, std::string_view segment, const char* what) {
  if (!m.route) return m;
  const auto id = percent_decode(segment);
  if (!id) {
    m.route.reset();
    m.status = 400;
    m.detail = std::string("the ") + what + " id in the path holds a malformed percent escape";
    return m;
  }
  if (auto err = task_id_error(*id)) {
    m.route.reset();
    m.status = 400;
    m.detail = std::string("bad ") + what + " id: " + *err;
    return m;
  }
  m.id = *id;
  return m;
}

// The bulk route POST /v1/tasks/<name> reaches; nullopt: <name> is only a task id. GET, PUT
// and DELETE of these names still address the task so named.
std::optional<Route> bulk_route(std::string_view name) {
  if (name == "batch") return Route::TaskBatch;
  if (name == "cancel") return Route::TaskCancelRange;
  if (name == "run-now") return Route::TaskRunNowRange;
  return std::nullopt;
}

}  // namespace

RouteMatch match_route(std::string_view method, std::string_view path) {
  const auto seg = segments_of(path);
  const auto one = [&](const char* a) { return seg.size() == 1 && seg[0] == a; };
  if (one("healthz")) return pick(method, "/healthz", {{"GET", Route::Healthz, std::nullopt}});
  if (one("readyz")) return pick(method, "/readyz", {{"GET", Route::Readyz, std::nullopt}});
  if (one("metrics")) return pick(method, "/metrics", {{"GET", Route::Metrics, std::nullopt}});
  if (path == "/" || path == "/index.html") {
    RouteMatch m = pick(method, "/", {{"GET", Route::ConsoleFile, std::nullopt}});
    m.id = "index.html";
    return m;
  }
  if (seg.size() == 2 && seg[0] == "console" && !seg[1].empty()) {
    RouteMatch m = pick(method, "/console/{file}", {{"GET", Route::ConsoleFile, std::nullopt}});
    m.id = std::string(seg[1]);  // the service answers 404 for a file the console does not have
    return m;
  }
  if (seg.size() >= 2 && seg[0] == "v1") {
    if (seg.size() == 2 && seg[1] == "openapi.json") {
      return pick(method, "/v1/openapi.json", {{"GET", Route::OpenApi, std::nullopt}});
    }
    if (seg.size() == 2 && seg[1] == "stats") return pick(method, "/v1/stats", {{"GET", Route::Stats, Scope::Read}});
    if (seg.size() == 2 && seg[1] == "pause") return pick(method, "/v1/pause", {{"POST", Route::Pause, Scope::Admin}});
    if (seg.size() == 2 && seg[1] == "resume") {
      return pick(method, "/v1/resume", {{"POST", Route::Resume, Scope::Admin}});
    }
    if (seg.size() == 2 && seg[1] == "dead") return pick(method, "/v1/dead", {{"GET", Route::DeadList, Scope::Read}});
    if (seg.size() == 3 && seg[1] == "dead" && seg[2] == "replay") {
      return pick(method, "/v1/dead/replay", {{"POST", Route::DeadReplay, Scope::Admin}});
    }
    if (seg.size() == 3 && seg[1] == "dead" && seg[2] == "purge") {
      return pick(method, "/v1/dead/purge", {{"POST", Route::DeadPurge, Scope::Admin}});
    }
    if (seg.size() == 2 && seg[1] == "whoami") return pick(method, "/v1/whoami", {{"GET", Route::WhoAmI, Scope::Read}});
    if (seg.size() == 2 && seg[1] == "audit") return pick(method, "/v1/audit", {{"GET", Route::Audit, Scope::Admin}});
    if (seg.size() == 2 && seg[1] == "overview") {
      return pick(method, "/v1/overview", {{"GET", Route::Overview, Scope::Read}});
    }
    if (seg.size() == 2 && seg[1] == "timeline") {
      return pick(method, "/v1/timeline", {{"GET", Route::Timeline, Scope::Read}});
    }
    if (seg.size() == 2 && seg[1] == "recurring") {
      return pick(method, "/v1/recurring", {{"GET", Route::Recurring, Scope::Read}});
    }
    if (seg.size() == 2 && seg[1] == "tasks") return pick(method, "/v1/tasks", {{"GET", Route::TaskList, Scope::Read}});
    if (seg.size() == 2 && seg[1] == "schedules") {
      return pick(method, "/v1/schedules", {{"GET", Route::ScheduleList, Scope::Read}});
    }
    if (seg.size() == 3 && seg[1] == "schedules" && seg[2] == "preview") {
      return pick(method, "/v1/schedules/preview", {{"POST", Route::SchedulePreviewRule, Scope::Read}});
    }
    if ((seg.size() == 3 || seg.size() == 4) && seg[1] == "schedules") {
      const std::string_view action = seg.size() == 4 ? seg[3] : std::string_view();
      RouteMatch m;
      if (seg.size() == 3) {
        m = pick(method, "/v1/schedules/{id}",
                 {{"GET", Route::ScheduleGet, Scope::Read},
                  {"PUT", Route::SchedulePut, Scope::Write},
                  {"DELETE", Route::ScheduleDelete, Scope::Write}});
      } else if (action == "pause") {
        m = pick(method, "/v1/schedules/{id}/pause", {{"POST", Route::SchedulePause, Scope::Write}});
      } else if (action == "resume") {
        m = pick(method, "/v1/schedules/{id}/resume", {{"POST", Route::ScheduleResume, Scope::Write}});
      } else if (action == "preview") {
        m = pick(method, "/v1/schedules/{id}/preview", {{"GET", Route::SchedulePreview, Scope::Read}});
      } else {
        m.status = 404;
        m.label = "other";
        m.detail = "no such resource";
        return m;
      }
      return with_id(std::move(m), seg[2], "schedule");
    }
    const bool task = seg.size() == 3 && seg[1] == "tasks";
    const std::string_view action = seg.size() == 4 && seg[1] == "tasks" ? seg[3] : std::string_view();
    const bool run_now = action == "run-now";
    const bool state = action == "state";
    const bool reschedule = action == "reschedule";
    if (task) {
      if (const auto bulk = bulk_route(seg[2])) {
        RouteMatch m = pick(method, "/v1/tasks/{id}",
                            {{"GET", Route::TaskGet, Scope::Read},
                             {"PUT", Route::TaskPut, Scope::Write},
                             {"DELETE", Route::TaskDelete, Scope::Write},
                             {"POST", *bulk, Scope::Write}});
        if (m.route != bulk) return with_id(std::move(m), seg[2], "task");
        m.label = "/v1/tasks/" + std::string(seg[2]);
        return m;
      }
    }
    if (task || run_now || state || reschedule) {
      RouteMatch m = task       ? pick(method, "/v1/tasks/{id}",
                                       {{"GET", Route::TaskGet, Scope::Read},
                                        {"PUT", Route::TaskPut, Scope::Write},
                                        {"DELETE", Route::TaskDelete, Scope::Write}})
                     : run_now  ? pick(method, "/v1/tasks/{id}/run-now", {{"POST", Route::TaskRunNow, Scope::Write}})
                     : state    ? pick(method, "/v1/tasks/{id}/state", {{"GET", Route::TaskState, Scope::Read}})
                                : pick(method, "/v1/tasks/{id}/reschedule",
                                       {{"POST", Route::TaskReschedule, Scope::Write}});
      return with_id(std::move(m), seg[2], "task");
    }
  }
  RouteMatch m;
  m.status = 404;
  m.label = "other";
  m.detail = "no such resource";
  return m;
}

}  // namespace expiry
