// order-webhook's request handling: the demo order service's endpoint for payment-timeout
// webhooks from expiry-webhook (docs/webhooks.md). POST /orders/timeout with the task's payload
// {"order_id": ...}: the Standard Webhooks signature is verified (HMAC-SHA256, constant-time
// compare, a timestamp more than 5 minutes off is refused), then the order is cancelled through
// orders_v1 order_cancel exactly as order-canceller does. Answers: 200 cancelled / paid /
// already_cancelled (the delivery is acknowledged), 400 malformed, 401 bad signature or stale
// timestamp, 404 no such order, 405/404 wrong method or path, 409 an unexpected status, 503 on a
// Redis error (expiry-webhook retries it). The evhttp server is in order_webhook_main.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "redis/reply.h"

namespace expiry {

// The path expiry-webhook's endpoint URL points at (the URL is fixed per endpoint: the order id
// comes from the payload).
constexpr const char* kOrderWebhookPath = "/orders/timeout";
// Largest accepted difference between webhook-timestamp and the receiver's clock.
constexpr int64_t kWebhookToleranceS = 300;

struct WebhookRequest {
  std::string method;  // "POST", ...
  std::string path;
  std::optional<std::string> id, timestamp, signature;  // webhook-id, webhook-timestamp, webhook-signature
  std::string body;
};

struct WebhookAnswer {
  int status = 200;
  std::string body;  // text/plain: the outcome or the reason
};

// Checks the Standard Webhooks headers of `request` against `keys` (decoded secrets) at
// `now_s` (Unix seconds): nullopt when valid, else the answer (400 headers missing or
// malformed, 401 a stale timestamp or no matching v1 signature). Pure.
std::optional<WebhookAnswer> verify_webhook(const std::vector<std::string>& keys, const WebhookRequest& request,
                                            int64_t now_s);

// Runs orders_v1 order_cancel with argv {"FCALL","order_cancel","1",key,reason,due_ms,task_id};
// a Reply of Type::IoError (or an error reply) becomes 503.
using OrderCancelCall = std::function<Reply(const std::vector<std::string>& argv)>;

// The whole request: route, signature, payload, then the cancel. Never throws.
WebhookAnswer handle_order_webhook(const std::vector<std::string>& keys, const WebhookRequest& request,
                                   int64_t now_s, const OrderCancelCall& cancel);

}  // namespace expiry
