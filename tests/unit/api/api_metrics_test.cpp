// The API's Prometheus metrics (src/api/api_metrics.h): requests by route, method and status, a
// cumulative latency histogram by route, and the connection gauges.
#include "api/api_metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace expiry {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(ApiMetrics, CountsAndCumulativeHistogram) {
  ApiMetrics m;
  m.record("/v1/tasks/{id}", "PUT", 201, 0.0004);
  m.record("/v1/tasks/{id}", "PUT", 201, 0.003);
  m.record("/v1/tasks/{id}", "GET", 404, 20);
  m.connection_opened();
  m.connection_opened();
  m.connection_closed();
  m.connection_refused();
  const std::string text = m.render();
  EXPECT_TRUE(has_line(text, "expiry_api_requests_total{route=\"/v1/tasks/{id}\",method=\"PUT\",status=\"201\"} 2"))
      << text;
  EXPECT_TRUE(has_line(text, "expiry_api_requests_total{route=\"/v1/tasks/{id}\",method=\"GET\",status=\"404\"} 1"));
  EXPECT_TRUE(has_line(text, "expiry_api_request_duration_seconds_bucket{route=\"/v1/tasks/{id}\",le=\"0.0005\"} 1"));
  EXPECT_TRUE(has_line(text, "expiry_api_request_duration_seconds_bucket{route=\"/v1/tasks/{id}\",le=\"0.005\"} 2"));
  EXPECT_TRUE(has_line(text, "expiry_api_request_duration_seconds_bucket{route=\"/v1/tasks/{id}\",le=\"10\"} 2"));
  EXPECT_TRUE(has_line(text, "expiry_api_request_duration_seconds_bucket{route=\"/v1/tasks/{id}\",le=\"+Inf\"} 3"));
  EXPECT_TRUE(has_line(text, "expiry_api_request_duration_seconds_count{route=\"/v1/tasks/{id}\"} 3"));
  EXPECT_TRUE(has_line(text, "expiry_api_open_connections 1"));
  EXPECT_TRUE(has_line(text, "expiry_api_redis_pipelined_calls_total 0"));
  EXPECT_TRUE(has_line(text, "expiry_api_connections_refused_total 1"));
  EXPECT_TRUE(has_line(text, "# TYPE expiry_api_request_duration_seconds histogram"));
}

TEST(ApiMetrics, LabelValuesAreEscaped) {
  ApiMetrics m;
  m.record("a\"b\\c\nd", "GET", 200, 0.1);
  EXPECT_NE(m.render().find("route=\"a\\\"b\\\\c\\nd\""), std::string::npos) << m.render();
}

}  // namespace
}  // namespace expiry
