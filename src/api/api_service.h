// The API's request handling, apart from HTTP transport: a request (method, path, query, the
// headers it reads, body) in, a response out. One per worker thread, with that thread's own
// Producer (blocking, not shared), made on first use and made again after a lost connection.
// A worker with an async connection to the same Redis may ask for a request's one FCALL instead
// of its answer (begin): PUT and DELETE /v1/tasks/{id} on one Redis, once the Producer knows the
// namespace's layout. The worker sends it pipelined and hands the reply to finish().
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "api/api_metrics.h"
#include "api/api_options.h"
#include "api/problem.h"
#include "api/routes.h"
#include "api/tokens.h"
#include "inspector/audit_record.h"
#include "log/log_limiter.h"
#include "producer/producer_target.h"
#include "redis/reply.h"

namespace expiry {

class Producer;
class RecurringSchedules;

struct ApiRequest {
  std::string method;  // "GET", ...
  std::string path;    // as sent, without the query
  std::string query;   // after '?', as sent; empty: none
  std::optional<std::string> authorization;
  std::optional<std::string> content_type;
  std::optional<std::string> traceparent;
  std::string body;
};

struct ApiResponse {
  int status = 200;
  std::string content_type;  // empty with an empty body
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond Content-Type
};

// A request waiting for one Redis reply: begin() made it, finish() answers it.
struct DeferredCall {
  std::vector<std::string> argv;                    // the FCALL, exactly the Producer's; for the one Redis
  std::function<ApiResponse(const Reply&)> answer;  // the reply's answer; throws as the Producer's call would
  std::string label;                                // the route template, for metrics
  std::string method;
  std::chrono::steady_clock::time_point started;    // for the latency histogram
  std::optional<AuditRecord> audit;                 // the action's audit record, its outcome still to add
};

class ApiService {
 public:
  ApiService(ProducerTarget target, const TokenSet& tokens, ApiMetrics& metrics, ApiOptions options);
  ~ApiService();
  ApiService(const ApiService&) = delete;
  ApiService& operator=(const ApiService&) = delete;

  // Never throws: a failure inside answers 500 (or 503 when Redis cannot be reached), and
  // every answer is recorded in the metrics under its route template.
  ApiResponse handle(const ApiRequest& request);
  // handle(), except that with `may_defer` (the caller's async connection is ready) a request
  // that is one FCALL on one Redis (not a cluster, not through Sentinel: their routing and
  // failover stay with the Producer) may come back as a DeferredCall, after its checks (auth,
  // limits, body, task validation) passed. An answer is recorded in the metrics; a
  // DeferredCall is recorded by finish(). Never throws.
  std::variant<ApiResponse, DeferredCall> begin(const ApiRequest& request, bool may_defer);
  // The answer to `call` from its reply (an IoError reply: 503, as a lost blocking connection),
  // with the error mapping of handle(); recorded in the metrics. Never throws.
  ApiResponse finish(const DeferredCall& call, const Reply& reply);
  // `response` as the answer to `call`, which was never sent (too many waiting); recorded.
  ApiResponse finish(const DeferredCall& call, ApiResponse response);
  // The worker's async connection was lost: Redis may have restarted, so the Producer is made
  // again (and the layout agreed again) before the next deferred call.
  void forget_producer();

  // Every write and admin action that a known token asked for (answered, refused or failed) is
  // appended to the audit trail: through `sink` when it takes the XADD (the worker's async
  // connection, when ready), else on the Producer's connection if there is one. A record that
  // cannot be written is logged, never fails the answer. `sink` returns false when it cannot send.
  void set_audit_sink(std::function<bool(std::vector<std::string>)> sink) { audit_sink_ = std::move(sink); }

  // Connects now (at start, so that a worker is ready before its first request); false, the
  // reason in `why`, when Redis cannot be reached (the next request tries again). Throws
  // AuthError when Redis refuses the credentials: no later request would do better.
  bool connect(std::string& why);

 private:
  std::variant<ApiResponse, DeferredCall> dispatch(const ApiRequest& request, const RouteMatch& match,
                                                   bool may_defer);
  ApiResponse route(const ApiRequest& request, const RouteMatch& match);
  // The call of a PUT or DELETE of one task, when it may be deferred; nullopt: handle it now.
  std::optional<std::variant<ApiResponse, DeferredCall>> defer(const ApiRequest& request, const RouteMatch& match);
  // fn(), with the Producer's exceptions mapped to answers (503, 500, 400) as for every route.
  template <class Fn>
  auto answer_guarded(Fn&& fn) -> decltype(fn());
  void record(const std::string& label, const std::string& method, int status,
              std::chrono::steady_clock::time_point started);
  Producer& producer();
  // The audit record begun for a write or admin route asked for by a known token; nullopt otherwise.
  std::optional<AuditRecord> audit_begun(const ApiRequest& request, const RouteMatch& match) const;
  // Appends `record` with `answer`'s outcome (see set_audit_sink). Never throws.
  void audit(AuditRecord record, const ApiResponse& answer);
  // The recurring schedules, on the Producer's connection and layout.
  RecurringSchedules schedules();

  ProducerTarget target_;
  const TokenSet& tokens_;
  ApiMetrics& metrics_;
  ApiOptions options_;
  // The token of the request being handled (handle() and begin() run one request at a time);
  // nullptr on a route that needs none.
  const TokenGrant* caller_ = nullptr;
  std::unique_ptr<Producer> producer_;
  LogLimiter not_ready_log_{std::chrono::seconds(10)};
  std::function<bool(std::vector<std::string>)> audit_sink_;
  LogLimiter audit_log_{std::chrono::seconds(10)};  // records that could not be written: one line per 10 s  // Redis loading, failing over ...: one line per 10 s
};

// A problem+json answer.
ApiResponse problem_response(int status, std::string detail);

}  // namespace expiry
