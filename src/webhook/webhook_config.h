// expiry-webhook's --config JSON (docs/webhooks.md): the endpoints tasks are delivered to, the
// networks private destinations may lie in, and the retry policy. Parsed strictly: an unknown
// key, a bad URL, secret or CIDR is a ConfigError naming it. Pure.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "webhook/address_policy.h"

namespace expiry {

struct WebhookEndpoint {
  std::string name;
  std::string url;                      // http:// or https://
  std::vector<std::string> secrets;     // decoded HMAC keys (the part after whsec_), 1 or 2
  std::chrono::milliseconds timeout{5000};
  size_t max_in_flight = 100;
  std::optional<std::string> ca_file;   // CURLOPT_CAINFO
};

struct WebhookConfig {
  std::map<std::string, WebhookEndpoint> endpoints;  // by name
  std::string default_endpoint;                      // for entries without a webhook field; empty: none
  std::vector<Cidr> allow_private;
  int max_attempts = 8;
  std::chrono::milliseconds retry_base{1000};
  std::chrono::milliseconds retry_max{300000};
  size_t max_queued = 1000;                          // per endpoint, waiting for a free slot

  const WebhookEndpoint* endpoint_for(const std::string& name) const;
};

// Parses the JSON text; throws ConfigError ("webhook config: endpoints.orders.url: ...").
WebhookConfig parse_webhook_config(const std::string& json_text);
// Reads and parses the file (ConfigError names the file).
WebhookConfig load_webhook_config(const std::string& path);

// The key of a "whsec_<base64>" secret; nullopt and `error` when it is not one.
std::optional<std::string> decode_webhook_secret(const std::string& text, std::string* error = nullptr);
// An error message if `url` is not an absolute http(s) URL with a host, without user info
// or fragment.
std::optional<std::string> webhook_url_error(const std::string& url);
// The host of a URL webhook_url_error accepts: a name, an IPv4 literal, or an IPv6 literal
// without its brackets; nullopt for a URL it refuses.
std::optional<std::string> webhook_url_host(const std::string& url);

}  // namespace expiry
