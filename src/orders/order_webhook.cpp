// See order_webhook.h.
#include "orders/order_webhook.h"

#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "base/integers.h"
#include "base/percent_encoding.h"
#include "orders/order_keys.h"
#include "webhook/signature.h"

namespace expiry {

namespace {

// Constant-time equality of two signatures (the length is not secret: both are base64 of 32 bytes).
bool same_signature(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

std::optional<WebhookAnswer> verify_webhook(const std::vector<std::string>& keys, const WebhookRequest& request,
                                            int64_t now_s) {
  if (!request.id || !request.timestamp || !request.signature || request.id->empty()) {
    return WebhookAnswer{400, "missing webhook-id, webhook-timestamp or webhook-signature"};
  }
  const auto ts = parse_int64(*request.timestamp);
  if (!ts) return WebhookAnswer{400, "webhook-timestamp is not an integer"};
  if (*ts < now_s - kWebhookToleranceS || *ts > now_s + kWebhookToleranceS) {
    return WebhookAnswer{401, "webhook-timestamp is more than 5 minutes off"};
  }
  const std::string message = *request.id + "." + std::to_string(*ts) + "." + request.body;
  std::vector<std::string> expected;
  for (const auto& key : keys) expected.push_back(hmac_sha256_base64(key, message));
  // "v1,<sig>" entries separated by spaces; any one matching any key is enough.
  const std::string& header = *request.signature;
  size_t at = 0;
  while (at <= header.size()) {
    size_t end = header.find(' ', at);
    if (end == std::string::npos) end = header.size();
    const std::string item = header.substr(at, end - at);
    if (item.rfind("v1,", 0) == 0) {
      const std::string sig = item.substr(3);
      bool match = false;
      for (const auto& e : expected) match |= same_signature(sig, e);
      if (match) return std::nullopt;
    }
    at = end + 1;
  }
  return WebhookAnswer{401, "no valid signature"};
}

WebhookAnswer handle_order_webhook(const std::vector<std::string>& keys, const WebhookRequest& request,
                                   int64_t now_s, const OrderCancelCall& cancel) {
  try {
    if (request.path != kOrderWebhookPath) return {404, "not found"};
    if (request.method != "POST") return {405, "POST only"};
    if (auto refused = verify_webhook(keys, request, now_s)) return *refused;
    auto j = nlohmann::json::parse(request.body, nullptr, false);
    if (!j.is_object() || !j.contains("order_id") || !j["order_id"].is_string() ||
        j["order_id"].get<std::string>().empty()) {
      return {400, "the payload has no order_id"};
    }
    const std::string order_id = j["order_id"].get<std::string>();
    // webhook-id is "<task id>.<occurrence_ms>": the task and its due time, recorded as
    // order-canceller records them.
    const std::string& id = *request.id;
    const size_t dot = id.rfind('.');
    // expiry-webhook percent-encodes the task id in webhook-id (webhook/signature.h).
    const std::string encoded_task_id = dot == std::string::npos ? id : id.substr(0, dot);
    const std::string task_id = percent_decode(encoded_task_id).value_or(encoded_task_id);
    const std::string due_ms = dot == std::string::npos ? "" : id.substr(dot + 1);
    const std::string key = order_key(order_id, OrderKeyScheme{});
    const Reply r = cancel({"FCALL", "order_cancel", "1", key, "payment timeout", due_ms, task_id});
    if (r.failed() || r.type == Reply::Type::Error) {
      spdlog::warn("order_cancel {}: {}", key, r.describe());
      return {503, "order_cancel failed; try again"};
    }
    if (r.str == "cancelled") {
      spdlog::info("cancelled {} (payment timeout, webhook {})", key, id);
      return {200, r.str};
    }
    if (r.str == "paid" || r.str == "already_cancelled") return {200, r.str};
    if (r.str == "missing") {
      spdlog::warn("timeout for {} but the order does not exist", key);
      return {404, "no such order"};
    }
    spdlog::warn("timeout for {} left alone: status {}", key, r.str);
    return {409, "order status " + r.str};
  } catch (const std::exception& e) {
    return {500, "internal error"};
  }
}

}  // namespace expiry
