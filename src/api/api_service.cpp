// See api_service.h.
#include "api/api_service.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <mutex>

#include "api/console_reads.h"
#include "api/api_audit.h"
#include "api/console_views.h"
#include "api/dead_letters.h"
#include "api/query_string.h"
#include "api/request_body.h"
#include "api/task_batch.h"
#include "api/task_json.h"
#include "api/task_ranges.h"
#include "api/token_narrowing.h"
#include "base/errors.h"
#include "base/percent_encoding.h"
#include "base/text_escape.h"
#include "functions/function_library.h"
#include "functions/key_layout.h"
#include "generated/openapi_json.h"
#include "inspector/audit_trail.h"
#include "inspector/inspector.h"
#include "producer/producer.h"
#include "producer/recurring_schedules.h"
#include "producer/task_calls.h"
#include "producer/task_placement.h"
#include "redis/redis_error.h"
#include "redis/redis_values.h"
#include "recur/occurrence_format.h"
#include "recur/recur_spec.h"
#include "recur/time_text.h"
#include "recur/time_zone.h"

namespace expiry {
namespace {

constexpr const char* kJson = "application/json";

// GET /v1/whoami's answer.
nlohmann::json whoami_json(const TokenGrant& grant) {
  return {{"scope", scope_name(grant.scope)},
          {"name", grant.name},
          {"named", grant.named},
          {"prefixes", grant.prefixes},
          {"namespace", grant.ns.empty() ? nlohmann::json() : nlohmann::json(grant.ns)}};
}

ApiResponse json_response(int status, const nlohmann::json& body) {
  ApiResponse r;
  r.status = status;
  r.content_type = kJson;
  r.body = json_text(body) + "\n";
  return r;
}

ApiResponse text_response(int status, std::string content_type, std::string body) {
  ApiResponse r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = std::move(body);
  return r;
}

// True for application/json, with or without parameters (charset), in any letter case.
bool is_json_media_type(const std::string& value) {
  std::string type = value.substr(0, value.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.erase(type.begin());
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type == "application/json";
}

// PUT /v1/tasks/{id}'s task from its body, or the 400 that refuses the body.
std::variant<Task, ApiResponse> put_task(const ApiRequest& request, const RouteMatch& match);

// The answers of PUT and DELETE /v1/tasks/{id} from their call's result.
ApiResponse put_response(const std::string& id, const ScheduleResult& result) {
  const bool created = !result.replaced && !result.kept;
  return json_response(created ? 201 : 200, schedule_result_json(id, result));
}

ApiResponse delete_response(const std::string& id, bool cancelled) {
  if (!cancelled) return problem_response(404, "task " + escape_text(id) + " is not pending");
  ApiResponse r;
  r.status = 204;
  return r;
}

// At most this many tasks are examined for one page filtered by a prefix.
constexpr long long kMaxPrefixScan = 10000;

}  // namespace

ApiResponse problem_response(int status, std::string detail) {
  ApiResponse r;
  r.status = status;
  r.content_type = kProblemContentType;
  r.body = problem_json({status, std::move(detail)}) + "\n";
  return r;
}

namespace {

std::variant<Task, ApiResponse> put_task(const ApiRequest& request, const RouteMatch& match) {
  if (request.body.empty()) return problem_response(400, "the body must be a JSON object with delay_ms or at_ms");
  auto parsed = parse_task_body(request.body, match.id, request.traceparent);
  if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
  return std::get<Task>(std::move(parsed));
}

}  // namespace

ApiService::ApiService(ProducerTarget target, const TokenSet& tokens, ApiMetrics& metrics, ApiOptions options)
    : target_(std::move(target)), tokens_(tokens), metrics_(metrics), options_(std::move(options)) {}

ApiService::~ApiService() = default;

Producer& ApiService::producer() {
  if (!producer_) {
    // Connections are made one at a time across the workers: the TLS and library setup a
    // connection runs once is then never raced, and a reconnecting burst reaches Redis in turn.
    static std::mutex connecting;
    std::lock_guard<std::mutex> lock(connecting);
    try {
      producer_ = std::make_unique<Producer>(target_);
    } catch (const AuthError& e) {  // kept apart: at start it ends the program (connect)
      throw AuthError(std::string("cannot use Redis: ") + e.what());
    } catch (const ConfigError& e) {  // a bucket count that contradicts NS:buckets, refused credentials
      throw std::runtime_error(std::string("cannot use Redis: ") + e.what());
    }
  }
  return *producer_;
}

RecurringSchedules ApiService::schedules() {
  return Inspector(producer()).recurring_schedules();
}

bool ApiService::connect(std::string& why) {
  try {
    producer();
    return true;
  } catch (const AuthError&) {
    throw;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

void ApiService::forget_producer() { producer_.reset(); }

ApiResponse ApiService::handle(const ApiRequest& request) { return std::get<ApiResponse>(begin(request, false)); }

std::variant<ApiResponse, DeferredCall> ApiService::begin(const ApiRequest& request, bool may_defer) {
  const auto started = std::chrono::steady_clock::now();
  RouteMatch match;
  ApiResponse response;
  try {
    match = match_route(request.method, request.path);
    auto outcome = dispatch(request, match, may_defer);
    if (auto* call = std::get_if<DeferredCall>(&outcome)) {
      call->label = match.label;
      call->method = request.method;
      call->started = started;
      call->audit = audit_begun(request, match);
      return std::move(*call);
    }
    response = std::get<ApiResponse>(std::move(outcome));
    if (auto record = audit_begun(request, match)) audit(std::move(*record), response);
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", request.method, escape_text(request.path), escape_text(e.what()));
    response = problem_response(500, "internal error");
  } catch (...) {
    response = problem_response(500, "internal error");
  }
  record(match.label.empty() ? "other" : match.label, request.method, response.status, started);
  return response;
}

ApiResponse ApiService::finish(const DeferredCall& call, const Reply& reply) {
  ApiResponse response;
  try {
    response = answer_guarded([&] {
      if (reply.is_io_error()) throw IoError(reply.str);  // what a lost blocking call throws
      return call.answer(reply);
    });
  } catch (const std::exception& e) {
    spdlog::error("{} {}: {}", call.method, call.label, escape_text(e.what()));
    response = problem_response(500, "internal error");
  } catch (...) {
    response = problem_response(500, "internal error");
  }
  record(call.label, call.method, response.status, call.started);
  if (call.audit) audit(*call.audit, response);
  return response;
}

ApiResponse ApiService::finish(const DeferredCall& call, ApiResponse response) {
  record(call.label, call.method, response.status, call.started);
  if (call.audit) audit(*call.audit, response);
  return response;
}

std::optional<AuditRecord> ApiService::audit_begun(const ApiRequest& request, const RouteMatch& match) const {
  // Reads are not recorded: routes of scope read, and GET (or HEAD) of any scope (GET /v1/audit).
  const bool read = !match.scope || *match.scope == Scope::Read || request.method == "GET" || request.method == "HEAD";
  if (caller_ == nullptr || read || options_.audit_max_entries == 0) return std::nullopt;
  AuditRecord r;
  r.actor = caller_->name;
  r.via = "api";
  r.action = audit_action(request.method, match);
  r.target = audit_target(match, request.body);
  return r;
}

void ApiService::audit(AuditRecord record, const ApiResponse& answer) {
  try {
    record.outcome = audit_outcome(answer.status, answer.content_type, answer.body);
    const auto argv = audit_append_argv(target_.ns, record, options_.audit_max_entries);
    if (!producer_) throw IoError("no connection to Redis");  // the answer was a 503: nothing was done
    // The worker's connection reaches the key only where it reaches every key (as defer()).
    const bool one_redis = !producer_->cluster() && !target_.redis.sentinel.enabled();
    if (one_redis && audit_sink_ && audit_sink_(argv)) return;
    Inspector(*producer_).audit_trail(options_.audit_max_entries).append(record);
  } catch (const std::exception& e) {
    if (const auto held_back = audit_log_.allow(Clock::now())) {
      spdlog::error("audit record of {} {} by {} not written: {} ({} more held back)", record.action,
                    escape_text(record.target), record.actor, escape_text(e.what()), *held_back);
    }
  }
}

void ApiService::record(const std::string& label, const std::string& method, int status,
                        std::chrono::steady_clock::time_point started) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  try {
    metrics_.record(label, method, status, seconds);
  } catch (...) {  // a metrics failure (memory) must not lose the answer
  }
}

template <class Fn>
auto ApiService::answer_guarded(Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const AuthError& e) {  // the credentials were refused after a start that took them
    spdlog::error("{}", escape_text(e.what()));
    return problem_response(503, "Redis refused the credentials");
  } catch (const ConfigError& e) {  // input the Producer refused before sending (a stream name)
    return problem_response(400, escape_text(e.what()));
  } catch (const IoError& e) {
    spdlog::warn("Redis unreachable: {}", escape_text(e.what()));
    producer_.reset();  // the next request connects again
    return problem_response(503, "Redis cannot be reached");
  } catch (const ReplyError& e) {
    // A state of the server that passes (loading its data set, a failover, a busy script):
    // 503 with Retry-After, naming no key, and one log line per 10 s however many requests.
    const RedisErrorKind kind = classify_error_in_message(e.what());
    if (is_transient(kind)) {
      if (const auto held_back = not_ready_log_.allow(Clock::now())) {
        spdlog::warn("Redis is not ready ({}): answering 503 ({} more held back)", to_string(kind), *held_back);
      }
      ApiResponse r = problem_response(503, std::string("Redis is not ready (") + to_string(kind) +
                                                "); try again shortly");
      r.headers.push_back({"Retry-After", "1"});
      return r;
    }
    spdlog::error("Redis refused a call: {}", escape_text(e.what()));
    return problem_response(500, "Redis refused the call: " + escape_text(e.what()));
  }
}

std::variant<ApiResponse, DeferredCall> ApiService::dispatch(const ApiRequest& request, const RouteMatch& match,
                                                             bool may_defer) {
  caller_ = nullptr;
  if (!match.route) {
    ApiResponse r = problem_response(match.status, match.detail);
    if (match.status == 405) r.headers.push_back({"Allow", match.allow});
    return r;
  }
  if (match.scope) {
    const auto token = request.authorization ? bearer_token(*request.authorization) : std::nullopt;
    const TokenGrant* granted = token ? tokens_.find(*token) : nullptr;
    if (!granted) {
      const char* why = !request.authorization ? "an Authorization: Bearer token is required"
                        : !token ? "the Authorization header is not of the Bearer scheme (Authorization: Bearer TOKEN)"
                                 : "the bearer token is not known";
      ApiResponse r = problem_response(401, why);
      r.headers.push_back({"WWW-Authenticate", "Bearer realm=\"expiry-api\""});
      return r;
    }
    caller_ = granted;
    if (!scope_allows(granted->scope, *match.scope)) {
      return problem_response(403, std::string("this route needs a token of scope ") + scope_name(*match.scope) +
                                       "; the token given has scope " + scope_name(granted->scope));
    }
    if (auto refusal = narrowing_refusal(*granted, match, target_.ns, request.query)) {
      return problem_response(403, std::move(*refusal));
    }
    if (match.route == Route::WhoAmI) return json_response(200, whoami_json(*granted));
  }
  if (request.body.size() > options_.max_body_bytes) {
    return problem_response(
        413, "the body is larger than the limit of " + std::to_string(options_.max_body_bytes) + " bytes");
  }
  if (!request.body.empty() && (!request.content_type || !is_json_media_type(*request.content_type))) {
    return problem_response(415, "a request body must be application/json");
  }
  if (may_defer) {
    auto deferred = answer_guarded([&]() -> std::optional<std::variant<ApiResponse, DeferredCall>> {
      return defer(request, match);
    });
    if (deferred) return std::move(*deferred);
  }
  return answer_guarded([&] { return route(request, match); });
}

std::optional<std::variant<ApiResponse, DeferredCall>> ApiService::defer(const ApiRequest& request,
                                                                          const RouteMatch& match) {
  // Only once a Producer has agreed the layout, and only where one connection reaches every key.
  if (!producer_ || producer_->cluster() || target_.redis.sentinel.enabled()) return std::nullopt;
  const TaskPlacement& layout = producer_->placement();
  DeferredCall call;
  switch (*match.route) {
    case Route::TaskPut: {
      auto task = put_task(request, match);
      if (auto* answer = std::get_if<ApiResponse>(&task)) return std::move(*answer);
      check_task(std::get<Task>(task), layout.ns);  // as Producer::schedule, before anything is sent
      call.argv = layout.schedule_argv(std::get<Task>(task));
      call.answer = [id = match.id](const Reply& reply) { return put_response(id, schedule_reply_result(reply)); };
      return call;
    }
    case Route::TaskDelete: {
      check_task_id(match.id);  // as Producer::cancel
      call.argv = cancel_argv(layout.keys_of_task(match.id), match.id);
      call.answer = [id = match.id](const Reply& reply) { return delete_response(id, cancel_reply_result(reply)); };
      return call;
    }
    default:
      return std::nullopt;
  }
}

ApiResponse ApiService::route(const ApiRequest& request, const RouteMatch& match) {
  switch (*match.route) {
    case Route::Healthz:
      return text_response(200, "text/plain; charset=utf-8", "ok\n");
    case Route::Readyz:
      producer().now_ms();
      return text_response(200, "text/plain; charset=utf-8", "ready\n");
    case Route::Metrics:
      return text_response(200, "text/plain; version=0.0.4; charset=utf-8", metrics_.render());
    case Route::OpenApi:
      return text_response(200, kJson, kOpenApiDocument);
    case Route::TaskPut: {
      auto task = put_task(request, match);
      if (auto* answer = std::get_if<ApiResponse>(&task)) return std::move(*answer);
      return put_response(match.id, producer().schedule(std::get<Task>(task)));
    }
    case Route::TaskGet: {
      const TaskDetails task = producer().show(match.id);
      if (!task.pending) return problem_response(404, "task " + escape_text(match.id) + " is not pending");
      return json_response(200, task_details_json(match.id, task));
    }
    case Route::TaskDelete:
      return delete_response(match.id, producer().cancel(match.id));
    case Route::TaskRunNow: {
      const RunNowResult result = producer().run_now(match.id);
      if (!result.pending) return problem_response(404, "task " + escape_text(match.id) + " is not pending");
      return json_response(200, run_now_result_json(match.id, result));
    }
    case Route::TaskList: {
      const auto pairs = query_pairs(request.query);
      if (!pairs) return problem_response(400, "the query string holds a malformed percent escape");
      auto parsed = parse_list_query(*pairs);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const TaskListRequest list = std::get<TaskListRequest>(parsed);
      // Without a prefix one page of the Producer's; with one, pages no larger than what is
      // still wanted (so every match read fits and the cursor stays exact), until the page is
      // full, the schedule ends or kMaxPrefixScan tasks were examined.
      std::vector<ListedTask> tasks;
      std::optional<std::string> next;
      ListQuery query = list.query;
      long long examined = 0;
      while (true) {
        query.count = list.query.count - static_cast<long long>(tasks.size());
        const TaskPage page = producer().list(query);
        examined += static_cast<long long>(page.tasks.size());
        for (const ListedTask& t : page.tasks) {
          if (t.id.compare(0, list.prefix.size(), list.prefix) == 0) tasks.push_back(t);
        }
        next = page.next_cursor;
        if (!next || list.prefix.empty() || static_cast<long long>(tasks.size()) >= list.query.count ||
            examined >= kMaxPrefixScan) {
          break;
        }
        query.cursor = *next;
      }
      nlohmann::json items = nlohmann::json::array();
      producer().list_details(
          tasks, 0, [&](size_t i, const ListedTaskDetails& d) { items.push_back(listed_task_json(tasks[i], d)); });
      return json_response(200, {{"tasks", items},
                                 {"count", tasks.size()},
                                 {"next_cursor", next ? nlohmann::json(*next) : nlohmann::json()}});
    }
    case Route::TaskBatch: {
      auto parsed = parse_batch_body(request.body, request.traceparent);
      if (auto* refusal = std::get_if<BodyRefusal>(&parsed)) {
        return problem_response(refusal->status, escape_text(refusal->detail));
      }
      return json_response(200, schedule_batch(producer(), std::get<std::vector<BatchItem>>(parsed), caller_));
    }
    case Route::TaskCancelRange:
    case Route::TaskRunNowRange: {
      auto parsed = parse_range_body(request.body);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const RangeRequest& range = std::get<RangeRequest>(parsed);
      // A token narrowed to prefixes may act only on a prefix within them, never on a due range.
      if (caller_ && caller_->narrowed_by_prefix() && (range.prefix.empty() || !caller_->covers_prefix(range.prefix))) {
        const std::string what = range.prefix.empty() ? std::string("a due range (every prefix)")
                                                      : "the prefix '" + escape_text(range.prefix) + "'";
        return problem_response(403, outside_prefixes_detail(*caller_, what));
      }
      const RangeAction action = *match.route == Route::TaskCancelRange ? RangeAction::Cancel : RangeAction::RunNow;
      return json_response(200, act_on_range(producer(), action, range));
    }
    case Route::Stats: {
      const NamespaceStats st = Inspector(producer()).stats();
      // A pause flag the Redis user may not read fails the request, as the flag's EXISTS did.
      if (!st.pause_known) throw ReplyError("NOPERM: the Redis user may not read the pause flags of " + target_.ns);
      return json_response(200, {{"namespace", producer().placement().ns},
                                 {"cluster", producer().cluster()},
                                 {"buckets", producer().placement().buckets},
                                 {"now_ms", st.now_ms},
                                 {"pending", st.pending},
                                 {"overdue", st.overdue},
                                 {"paused_buckets", st.pause_flags},
                                 {"next_due_ms", st.next_due_ms ? nlohmann::json(*st.next_due_ms) : nlohmann::json()}});
    }
    case Route::Pause: {
      auto parsed = parse_pause_body(request.body);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const PauseResult r = producer().pause(std::chrono::milliseconds(std::get<long long>(parsed)));
      return json_response(200, {{"paused_until_ms", r.value},
                                 {"buckets", producer().buckets()},
                                 {"pending", r.pending},
                                 {"overdue", r.overdue}});
    }
    case Route::Resume: {
      const PauseResult r = producer().resume();
      return json_response(200, {{"buckets_paused", r.value},
                                 {"buckets", producer().buckets()},
                                 {"pending", r.pending},
                                 {"overdue", r.overdue}});
    }
    case Route::DeadList: {
      const auto pairs = query_pairs(request.query);
      if (!pairs) return problem_response(400, "the query string holds a malformed percent escape");
      auto parsed = parse_dead_list_query(*pairs);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      return json_response(200, list_dead_letters(producer(), options_.dead_stream, std::get<long long>(parsed)));
    }
    case Route::DeadReplay: {
      auto parsed = parse_dead_replay_body(request.body);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const DeadReplayRequest& replay = std::get<DeadReplayRequest>(parsed);
      return json_response(200, replay_dead_letters(producer(), options_.dead_stream, replay.entries, replay.delay_ms));
    }
    case Route::DeadPurge: {
      auto parsed = parse_dead_purge_body(request.body);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      return json_response(
          200, purge_dead_letters(producer(), options_.dead_stream, std::get<std::vector<std::string>>(parsed)));
    }
    case Route::Overview:
      if (!request.query.empty()) return problem_response(400, "GET /v1/overview takes no query parameters");
      return json_response(200, read_overview(producer(), options_.dead_stream));
    case Route::Timeline:
      if (!request.query.empty()) return problem_response(400, "GET /v1/timeline takes no query parameters");
      return json_response(200, read_timeline(producer()));
    case Route::Recurring: {
      const auto pairs = query_pairs(request.query);
      if (!pairs) return problem_response(400, "the query string holds a malformed percent escape");
      auto parsed = parse_dead_list_query(*pairs);  // the same single `limit` parameter
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      return json_response(200, read_recurring(producer(), std::get<long long>(parsed)));
    }
    case Route::TaskState:
      return json_response(200, read_task_state(producer(), options_.dead_stream, match.id));
    case Route::TaskReschedule: {
      auto parsed = parse_reschedule_body(request.body);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const RescheduleRequest& r = std::get<RescheduleRequest>(parsed);
      const auto result = producer().reschedule(match.id, r.mode, r.ms);
      if (!result) return problem_response(404, "task " + escape_text(match.id) + " is not pending");
      return json_response(200, {{"id", match.id}, {"due_ms", result->due_ms}, {"now_ms", result->now_ms}});
    }
    case Route::Audit: {
      const auto pairs = query_pairs(request.query);
      if (!pairs) return problem_response(400, "the query string holds a malformed percent escape");
      auto parsed = parse_audit_query(*pairs);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      AuditTrail trail = Inspector(producer()).audit_trail(options_.audit_max_entries);
      return json_response(200, audit_page_json(trail.read(std::get<AuditQuery>(parsed))));
    }
    case Route::ScheduleList: {
      const auto pairs = query_pairs(request.query);
      if (!pairs) return problem_response(400, "the query string holds a malformed percent escape");
      auto parsed = parse_dead_list_query(*pairs);  // the same single `limit` parameter
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const long long limit = std::get<long long>(parsed);
      nlohmann::json items = nlohmann::json::array();
      bool more = false;
      schedules().for_each([&](const RecurringSchedule& s) {
        if (static_cast<long long>(items.size()) >= limit) {
          more = true;
          return false;
        }
        items.push_back(recurring_schedule_json(s));
        return true;
      });
      return json_response(200, {{"schedules", items}, {"count", items.size()}, {"more", more}});
    }
    case Route::SchedulePreviewRule: {
      auto parsed = parse_schedule_preview_body(request.body);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const SchedulePreviewRequest& r = std::get<SchedulePreviewRequest>(parsed);
      if (auto err = time_zone_name_error(r.rule.tz)) return problem_response(400, "tz: " + escape_text(*err));
      const long long from = r.from ? parse_time_arg(*r.from, TimeZone::find(r.rule.tz)) : producer().now_ms();
      return json_response(200, occurrences_json(preview_recur_rule(r.rule, from, static_cast<size_t>(r.count),
                                                                    kRecurJsonNames)));
    }
    case Route::SchedulePut: {
      auto parsed = parse_schedule_body(request.body);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const RecurringSetOutcome out = schedules().set(match.id, std::get<RecurringWrite>(parsed), kRecurJsonNames);
      nlohmann::json j = {{"id", match.id},
                          {"replaced", out.result.replaced},
                          {"version", out.result.version},
                          {"rule", out.rule_text},
                          {"tz", out.zone.name()},
                          {"armed_ms", nullptr},
                          {"armed_local", nullptr}};
      if (out.result.armed_ms >= 0) {
        j["armed_ms"] = out.result.armed_ms;
        j["armed_local"] = format_local_iso(out.result.armed_ms, out.zone);
      }
      return json_response(out.result.replaced ? 200 : 201, j);
    }
    case Route::ScheduleGet: {
      const auto schedule = schedules().get(match.id);
      if (!schedule) return problem_response(404, "no recurring schedule " + escape_text(match.id));
      return json_response(200, recurring_schedule_json(*schedule));
    }
    case Route::ScheduleDelete:
      if (!schedules().remove(match.id)) return problem_response(404, "no recurring schedule " + escape_text(match.id));
      return json_response(200, {{"id", match.id}, {"deleted", true}});
    case Route::SchedulePause: {
      const RecurStateResult r = schedules().pause(match.id);
      if (!r.exists) return problem_response(404, "no recurring schedule " + escape_text(match.id));
      return json_response(200, {{"id", match.id}, {"paused", true}, {"changed", r.changed}});
    }
    case Route::ScheduleResume: {
      const RecurringResumeOutcome r = schedules().resume(match.id);
      if (!r.state.exists) return problem_response(404, "no recurring schedule " + escape_text(match.id));
      nlohmann::json j = {{"id", match.id}, {"paused", false}, {"changed", r.state.changed}, {"armed_ms", nullptr}};
      if (r.state.armed_ms >= 0) j["armed_ms"] = r.state.armed_ms;
      return json_response(200, j);
    }
    case Route::SchedulePreview: {
      const auto pairs = query_pairs(request.query);
      if (!pairs) return problem_response(400, "the query string holds a malformed percent escape");
      auto parsed = parse_preview_query(*pairs);
      if (auto* err = std::get_if<std::string>(&parsed)) return problem_response(400, escape_text(*err));
      const auto schedule = schedules().get(match.id, static_cast<int>(std::get<long long>(parsed)));
      if (!schedule) return problem_response(404, "no recurring schedule " + escape_text(match.id));
      nlohmann::json j = occurrences_json(schedule->next);  // {"occurrences": [...]}
      j["id"] = match.id;
      j["paused"] = schedule->paused();
      return json_response(200, j);
    }
    case Route::WhoAmI:  // answered in dispatch, where the token's scope is known
      return problem_response(500, "unhandled route");
    case Route::ConsoleFile: {
      const auto file = console_file(match.id);
      if (!file) return problem_response(404, "no such resource");
      ApiResponse r = text_response(200, file->content_type, std::string(file->body));
      r.headers = console_headers();
      return r;
    }
  }
  return problem_response(500, "unhandled route");
}

}  // namespace expiry
