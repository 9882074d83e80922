// See webhook_config.h.
#include "webhook/webhook_config.h"

#include <nlohmann/json.hpp>

#include <set>

#include "base/base64.h"
#include "base/errors.h"
#include "config/text_file.h"
#include "functions/task_options.h"

namespace expiry {

namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& where, const std::string& why) {
  throw ConfigError("webhook config: " + where + ": " + why);
}

void check_keys(const json& object, const std::string& where, const std::set<std::string>& known) {
  for (const auto& [key, value] : object.items()) {
    if (!known.count(key)) refuse(where.empty() ? key : where + "." + key, "unknown key");
  }
}

long long integer_in(const json& value, const std::string& where, long long min, long long max) {
  if (!value.is_number_integer()) refuse(where, "must be an integer");
  const long long n = value.get<long long>();
  if (n < min || n > max) refuse(where, "must be " + std::to_string(min) + ".." + std::to_string(max));
  return n;
}

std::string string_at(const json& value, const std::string& where) {
  if (!value.is_string()) refuse(where, "must be a string");
  return value.get<std::string>();
}

WebhookEndpoint endpoint_from(const std::string& name, const json& j) {
  const std::string where = "endpoints." + name;
  if (auto e = webhook_name_error(name)) refuse(where, *e);
  if (!j.is_object()) refuse(where, "must be an object");
  check_keys(j, where, {"url", "secret", "secrets", "timeout_ms", "max_in_flight", "ca_file"});
  WebhookEndpoint ep;
  ep.name = name;
  if (!j.contains("url")) refuse(where + ".url", "missing");
  ep.url = string_at(j["url"], where + ".url");
  if (auto e = webhook_url_error(ep.url)) refuse(where + ".url", *e);
  std::vector<std::string> texts;
  if (j.contains("secret")) texts.push_back(string_at(j["secret"], where + ".secret"));
  if (j.contains("secrets")) {
    if (!j["secrets"].is_array()) refuse(where + ".secrets", "must be an array of strings");
    for (const auto& s : j["secrets"]) texts.push_back(string_at(s, where + ".secrets"));
  }
  if (texts.empty()) refuse(where, "needs a secret");
  if (texts.size() > 2) refuse(where, "at most two secrets (the current one and the next, for rotation)");
  for (const auto& t : texts) {
    std::string error;
    auto key = decode_webhook_secret(t, &error);
    if (!key) refuse(where + ".secret", error);
    ep.secrets.push_back(*key);
  }
  if (j.contains("timeout_ms")) {
    ep.timeout = std::chrono::milliseconds(integer_in(j["timeout_ms"], where + ".timeout_ms", 1, 600000));
  }
  if (j.contains("max_in_flight")) {
    ep.max_in_flight = static_cast<size_t>(integer_in(j["max_in_flight"], where + ".max_in_flight", 1, 10000));
  }
  if (j.contains("ca_file")) {
    ep.ca_file = string_at(j["ca_file"], where + ".ca_file");
    if (ep.ca_file->empty()) refuse(where + ".ca_file", "must not be empty");
  }
  return ep;
}

}  // namespace

const WebhookEndpoint* WebhookConfig::endpoint_for(const std::string& name) const {
  const std::string& key = name.empty() ? default_endpoint : name;
  auto it = endpoints.find(key);
  return it == endpoints.end() ? nullptr : &it->second;
}

std::optional<std::string> decode_webhook_secret(const std::string& text, std::string* error) {
  const std::string prefix = "whsec_";
  if (text.rfind(prefix, 0) != 0) {
    if (error) *error = "a secret must be whsec_<base64>";
    return std::nullopt;
  }
  std::string why;
  auto key = base64_decode(std::string_view(text).substr(prefix.size()), &why);
  if (!key) {
    if (error) *error = "the part after whsec_ is not base64: " + why;
    return std::nullopt;
  }
  if (key->size() < 16 || key->size() > 64) {
    if (error) *error = "a secret must decode to 16..64 bytes, not " + std::to_string(key->size());
    return std::nullopt;
  }
  return key;
}

namespace {

// The host of a webhook URL (an IPv6 literal without its brackets), or the error of
// webhook_url_error.
struct UrlHost {
  std::string host;
  std::optional<std::string> error;
};

UrlHost url_host(const std::string& url) {
  size_t rest = 0;
  if (url.rfind("https://", 0) == 0) {
    rest = 8;
  } else if (url.rfind("http://", 0) == 0) {
    rest = 7;
  } else {
    return {"", "must start with https:// or http://"};
  }
  for (unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f) return {"", "must not contain spaces, control or non-ASCII characters"};
  }
  if (url.find('#') != std::string::npos) return {"", "must not have a fragment"};
  const size_t end = url.find_first_of("/?", rest);
  const std::string authority = url.substr(rest, end == std::string::npos ? std::string::npos : end - rest);
  if (authority.find('@') != std::string::npos) return {"", "must not carry user info (put credentials in headers)"};
  std::string host = authority;
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    if (close == std::string::npos) return {"", "has an unclosed [ in its host"};
    const std::string after = host.substr(close + 1);
    host = host.substr(1, close - 1);
    if (!after.empty() && after.front() != ':') return {"", "has a bad port"};
  } else {
    const size_t colon = host.find(':');
    if (colon != std::string::npos) {
      const std::string port = host.substr(colon + 1);
      if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
          std::stol(port) < 1 || std::stol(port) > 65535) {
        return {"", "has a bad port"};
      }
      host = host.substr(0, colon);
    }
  }
  if (host.empty()) return {"", "has no host"};
  return {host, std::nullopt};
}

}  // namespace

std::optional<std::string> webhook_url_error(const std::string& url) { return url_host(url).error; }

std::optional<std::string> webhook_url_host(const std::string& url) {
  UrlHost h = url_host(url);
  if (h.error) return std::nullopt;
  return std::move(h.host);
}

WebhookConfig parse_webhook_config(const std::string& json_text) {
  json j = json::parse(json_text, nullptr, false);
  if (j.is_discarded()) throw ConfigError("webhook config: not valid JSON");
  if (!j.is_object()) throw ConfigError("webhook config: must be a JSON object");
  check_keys(j, "", {"endpoints", "default_endpoint", "allow_private", "max_attempts", "retry_base_ms",
                     "retry_max_ms", "max_queued"});
  WebhookConfig c;
  if (!j.contains("endpoints") || !j["endpoints"].is_object() || j["endpoints"].empty()) {
    refuse("endpoints", "must be an object with at least one endpoint");
  }
  for (const auto& [name, value] : j["endpoints"].items()) c.endpoints.emplace(name, endpoint_from(name, value));
  if (j.contains("default_endpoint")) {
    c.default_endpoint = string_at(j["default_endpoint"], "default_endpoint");
    if (!c.endpoints.count(c.default_endpoint)) refuse("default_endpoint", "names no endpoint");
  }
  if (j.contains("allow_private")) {
    if (!j["allow_private"].is_array()) refuse("allow_private", "must be an array of CIDRs");
    for (const auto& v : j["allow_private"]) {
      std::string error;
      auto cidr = parse_cidr(string_at(v, "allow_private"), &error);
      if (!cidr) refuse("allow_private", error);
      c.allow_private.push_back(*cidr);
    }
  }
  if (j.contains("max_attempts")) {
    c.max_attempts = static_cast<int>(integer_in(j["max_attempts"], "max_attempts", 1, 1000));
  }
  if (j.contains("retry_base_ms")) {
    c.retry_base = std::chrono::milliseconds(integer_in(j["retry_base_ms"], "retry_base_ms", 1, 86400000));
  }
  if (j.contains("retry_max_ms")) {
    c.retry_max = std::chrono::milliseconds(integer_in(j["retry_max_ms"], "retry_max_ms", 1, 86400000LL * 30));
  }
  if (c.retry_max < c.retry_base) refuse("retry_max_ms", "must not be below retry_base_ms");
  if (j.contains("max_queued")) {
    c.max_queued = static_cast<size_t>(integer_in(j["max_queued"], "max_queued", 1, 1000000));
  }
  return c;
}

WebhookConfig load_webhook_config(const std::string& path) {
  const std::string text = read_text_file(path, "webhook config file");
  try {
    return parse_webhook_config(text);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(e.what()) + " (in " + path + ")");
  }
}

}  // namespace expiry
