// What one delivery attempt's answer means for its task (docs/webhooks.md, "Retries"): 2xx
// done; 408, 425, 429, 5xx, timeouts and connection errors retried with exponential backoff
// (Retry-After honoured within the cap); other 4xx (410 included) dead-lettered at once; a
// destination the address policy refused dead-lettered. Pure.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "consumer/entry_handler.h"

namespace expiry {

// One attempt's result as the HTTP client saw it.
struct AttemptResult {
  long status = 0;                 // the HTTP status; 0 when there was no response
  std::string error;               // the transport error when status is 0 ("connection refused", "timeout")
  bool destination_refused = false; // the address policy refused every resolved address
  std::string body;                // the first bytes of the response body (at most 4 KiB)
  std::string retry_after;         // the Retry-After header, as sent
};

struct DeliveryDecision {
  HandleOutcome outcome = HandleOutcome::Done;
  std::string reason;
  std::optional<std::chrono::milliseconds> delay;  // Retry: the delay before the next attempt
};

struct RetryPolicy {
  int max_attempts = 8;
  std::chrono::milliseconds base{1000};
  std::chrono::milliseconds max{300000};
};

// min(max, base * 2^(attempt - 1)) for the attempt that just failed (1-based).
std::chrono::milliseconds webhook_backoff(const RetryPolicy& policy, long long attempt);
// The Retry-After delay in seconds form ("120"); nullopt for a date or junk.
std::optional<std::chrono::milliseconds> parse_retry_after(const std::string& value);

// The decision for attempt `attempt` (1-based; the entry's attempt field).
DeliveryDecision decide_delivery(const AttemptResult& result, const RetryPolicy& policy, long long attempt);

// "2xx", "4xx", "5xx", "error", "refused": the metrics' status class.
std::string status_class(const AttemptResult& result);

}  // namespace expiry
