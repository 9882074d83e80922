// See delivery_outcome.h.
#include "webhook/delivery_outcome.h"

#include <algorithm>

namespace expiry {

namespace {
// The first 200 bytes of a response body, control characters as spaces, for a dead letter's reason.
std::string body_excerpt(const std::string& body) {
  std::string out = body.substr(0, 200);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}
}  // namespace

std::chrono::milliseconds webhook_backoff(const RetryPolicy& policy, long long attempt) {
  const long long shift = std::clamp(attempt - 1, 0LL, 40LL);
  const long double delay = static_cast<long double>(policy.base.count()) * static_cast<long double>(1ULL << shift);
  if (delay >= static_cast<long double>(policy.max.count())) return policy.max;
  return std::chrono::milliseconds(static_cast<long long>(delay));
}

std::optional<std::chrono::milliseconds> parse_retry_after(const std::string& value) {
  size_t b = value.find_first_not_of(" \t");
  size_t e = value.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return std::nullopt;
  const std::string v = value.substr(b, e - b + 1);
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::chrono::milliseconds(std::stoll(v) * 1000);
}

DeliveryDecision decide_delivery(const AttemptResult& r, const RetryPolicy& policy, long long attempt) {
  DeliveryDecision d;
  if (r.destination_refused) {
    d.outcome = HandleOutcome::Reject;
    d.reason = "destination not allowed" + (r.error.empty() ? std::string() : ": " + r.error);
    return d;
  }
  const long s = r.status;
  if (s >= 200 && s < 300) {
    d.outcome = HandleOutcome::Done;
    d.reason = "http " + std::to_string(s);
    return d;
  }
  const bool retryable = s == 0 || s == 408 || s == 425 || s == 429 || s >= 500 || s < 200;
  if (!retryable) {
    d.outcome = HandleOutcome::Reject;
    d.reason = "http " + std::to_string(s) + ": " + body_excerpt(r.body);
    return d;
  }
  d.outcome = HandleOutcome::Retry;
  d.reason = s == 0 ? r.error : "http " + std::to_string(s) + ": " + body_excerpt(r.body);
  auto delay = webhook_backoff(policy, attempt);
  if (auto after = parse_retry_after(r.retry_after)) delay = std::min(policy.max, std::max(delay, *after));
  d.delay = delay;
  return d;
}

std::string status_class(const AttemptResult& r) {
  if (r.destination_refused) return "refused";
  if (r.status == 0) return "error";
  if (r.status >= 200 && r.status < 300) return "2xx";
  if (r.status >= 300 && r.status < 400) return "3xx";
  if (r.status >= 400 && r.status < 500) return "4xx";
  if (r.status >= 500 && r.status < 600) return "5xx";
  return "other";
}

}  // namespace expiry
