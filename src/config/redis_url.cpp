// Parsing of redis:// URLs; see redis_url.h for the accepted grammar.
#include "config/redis_url.h"

#include <cctype>
#include <string>

#include "base/errors.h"
#include "base/percent_encoding.h"

namespace expiry {
namespace {

constexpr std::string_view kScheme = "redis://";
constexpr std::string_view kTlsScheme = "rediss://";

[[noreturn]] void fail(const std::string& why) {
  throw ConfigError("invalid Redis URL: " + why + " (expected redis://[user:password@]host:port[/db])");
}

// The user or password of a URL, %XX escapes decoded.
std::string decode_credentials(std::string_view s) {
  auto decoded = percent_decode(s);
  if (!decoded) fail("bad or truncated percent escape in credentials");
  return *decoded;
}

// Parses a decimal number in [lo, hi]; `what` names it in the error.
int parse_bounded(std::string_view s, int lo, int hi, const char* what) {
  if (s.empty() || s.size() > 9) fail(std::string("bad ") + what + " '" + std::string(s) + "'");
  int v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) fail(std::string("bad ") + what + " '" + std::string(s) + "'");
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) fail(std::string(what) + " out of range: " + std::string(s));
  return v;
}

bool valid_hostname(std::string_view h) {
  if (h.empty() || h.size() > 253) return false;
  for (char c : h) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return false;
  }
  return true;
}

}  // namespace

std::string RedisEndpoint::redacted() const {
  std::string out(tls.enabled ? kTlsScheme : kScheme);
  if (!user.empty() || !password.empty()) {
    out += user;
    if (!password.empty()) out += ":***";
    out += "@";
  }
  out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  out += ":" + std::to_string(port) + "/" + std::to_string(db);
  return out;
}

std::string RedisEndpoint::where() const {
  if (!sentinel.enabled()) return redacted();
  std::string out(tls.enabled ? kTlsScheme : kScheme);
  if (!user.empty() || !password.empty()) {
    out += user;
    if (!password.empty()) out += ":***";
    out += "@";
  }
  return out + "<sentinel master " + sentinel.describe() + ">/" + std::to_string(db);
}

RedisEndpoint parse_redis_url(std::string_view url) {
  RedisEndpoint ep;
  std::string_view rest;
  if (url.substr(0, kScheme.size()) == kScheme) {
    rest = url.substr(kScheme.size());
  } else if (url.substr(0, kTlsScheme.size()) == kTlsScheme) {
    rest = url.substr(kTlsScheme.size());
    ep.tls.enabled = true;
  } else {
    fail("scheme must be redis:// or rediss:// (TLS)");
  }

  // Credentials end at the last '@' (a password may contain '/' or '@'); the path follows the host.
  std::string_view creds;
  bool has_creds = false;
  auto at = rest.rfind('@');
  if (at != std::string_view::npos) {
    creds = rest.substr(0, at);
    rest = rest.substr(at + 1);
    has_creds = true;
  }
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash + 1);
    if (!path.empty()) ep.db = parse_bounded(path, 0, 15999, "database number");
  }
  if (has_creds) {
    auto colon = creds.find(':');
    if (colon == std::string_view::npos) {
      ep.password = decode_credentials(creds);  // redis://password@host, as redis-cli -u accepts
    } else {
      ep.user = decode_credentials(creds.substr(0, colon));
      ep.password = decode_credentials(creds.substr(colon + 1));
    }
  }

  std::string_view host_part = authority;
  std::string_view port_part;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) fail("unterminated [IPv6] address");
    host_part = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') fail("unexpected text after ]");
      port_part = after.substr(1);
      if (port_part.empty()) fail("empty port");
    }
    if (host_part.empty()) fail("empty host");
  } else {
    auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host_part = authority.substr(0, colon);
      port_part = authority.substr(colon + 1);
      if (port_part.empty()) fail("empty port");
    }
    if (!valid_hostname(host_part)) fail("bad host '" + std::string(host_part) + "'");
  }
  ep.host = std::string(host_part);
  if (!port_part.empty()) ep.port = parse_bounded(port_part, 1, 65535, "port");
  return ep;
}

}  // namespace expiry
