// The API's request handling, apart from HTTP transport: a request (method, path, query, the
// headers it reads, body) in, a response out. One per worker thread, with that thread's own
// Producer (blocking, not shared), made on first use and made again after a lost connection.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/api_metrics.h"
#include "api/problem.h"
#include "api/routes.h"
#include "api/tokens.h"
#include "producer/producer_target.h"

namespace expiry {

class Producer;

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

struct ApiOptions {
  size_t max_body_bytes = 1 << 20;
  std::string dead_stream;  // the single-bucket dead stream (empty: <stream>:dead), as expiry-ctl dead --dead-stream
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

  // Connects now (at start, so that a worker is ready before its first request); false, the
  // reason in `why`, when Redis cannot be reached (the next request tries again). Throws
  // AuthError when Redis refuses the credentials: no later request would do better.
  bool connect(std::string& why);

 private:
  ApiResponse dispatch(const ApiRequest& request, const RouteMatch& match);
  ApiResponse route(const ApiRequest& request, const RouteMatch& match);
  Producer& producer();

  ProducerTarget target_;
  const TokenSet& tokens_;
  ApiMetrics& metrics_;
  ApiOptions options_;
  std::unique_ptr<Producer> producer_;
};

// A problem+json answer.
ApiResponse problem_response(int status, std::string detail);

}  // namespace expiry
