// Fuzz target for parse_redis_url and RedisEndpoint::redacted (src/config/redis_url.h).
// Invariants: only ConfigError escapes; an accepted URL has a port in 1..65535, a db in
// 0..15999 and a host that is a hostname or an IPv4/IPv6 address; redacted() never depends on
// the password's content (so it cannot leak it), marks a password with "***", and parses back
// to the same host, port, db and user whenever the user name needs no escaping.
#include <arpa/inet.h>

#include <cctype>
#include <string>

#include "base/errors.h"
#include "config/redis_url.h"
#include "fuzz_check.h"
#include "fuzz_targets.h"

namespace expiry::fuzz {
namespace {

// What parse_redis_url accepts as a host outside brackets.
bool hostname_text(std::string_view s) {
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return false;
  }
  return !s.empty() && s.size() <= 253;
}

// An IPv6 address as inet_pton reads it, with an optional "%zone" suffix.
bool ipv6_text(std::string_view s) {
  const std::string addr(s.substr(0, s.find('%')));
  in6_addr out;
  return addr.find('\0') == std::string::npos && inet_pton(AF_INET6, addr.c_str(), &out) == 1;
}

// True if `s` can appear in a URL's user part without percent-encoding.
bool plain_text(std::string_view s) {
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7F || c == '%' || c == '@' || c == ':' || c == '/' || c == '[' || c == ']') return false;
  }
  return true;
}

void check_redacted(const RedisEndpoint& ep) {
  const std::string shown = ep.redacted();
  const std::string scheme = ep.tls.enabled ? "rediss://" : "redis://";
  require(shown.rfind(scheme, 0) == 0, "redacted() starts with the URL's scheme", shown);

  // The password's content must not influence the output at all: stronger than searching the
  // output for the password, which also finds passwords like "6379" that occur by coincidence.
  RedisEndpoint other = ep;
  if (!ep.password.empty()) {
    other.password = ep.password == "x" ? "y" : "x";
    require(other.redacted() == shown, "redacted() depends on the password", shown);
    require(shown.find(":***@") != std::string::npos, "redacted() marks a password with :***@", shown);
  } else {
    require(shown.find("***") == std::string::npos || ep.user.find("***") != std::string::npos ||
                ep.host.find("***") != std::string::npos,
            "redacted() shows *** without a password", shown);
  }

  if (plain_text(ep.user)) {
    RedisEndpoint back;
    try {
      back = parse_redis_url(shown);
    } catch (const ConfigError& e) {
      invariant_failed("redacted() of an accepted URL does not parse", shown + " -> " + e.what());
    }
    require(back.host == ep.host && back.port == ep.port && back.db == ep.db,
            "redacted() does not parse back to the same host, port and db", shown);
    require(back.tls.enabled == ep.tls.enabled, "redacted() does not parse back to the same scheme", shown);
    // Known finding "redacted-user-without-password": "redis://user:@host" is shown as
    // "redis://user@host", which reads back as the password "user".
    if (ep.password.empty() && !ep.user.empty() && tolerate_known_finding("redacted-user-without-password")) return;
    require(back.user == ep.user, "redacted() does not parse back to the same user", shown);
    require(back.password.empty() == ep.password.empty(), "redacted() loses whether there is a password", shown);
  }
}

}  // namespace

void fuzz_redis_url(std::string_view input) {
  RedisEndpoint ep;
  try {
    ep = parse_redis_url(input);
  } catch (const ConfigError& e) {
    require(std::string_view(e.what()).rfind("invalid Redis URL: ", 0) == 0, "ConfigError names the URL", e.what());
    return;
  }
  require(ep.port >= 1 && ep.port <= 65535, "port in 1..65535", std::to_string(ep.port));
  require(ep.db >= 0 && ep.db <= 15999, "db in 0..15999", std::to_string(ep.db));
  require(!ep.host.empty(), "host is not empty", input);
  require(ep.host.find_first_of("/@") == std::string::npos, "host holds no / or @", ep.host);
  // Known finding "bracketed-host-unvalidated": anything between [ and ] is taken as the host
  // ("redis://[not a host]:1"), so the mistake surfaces as endless reconnects, not exit 2.
  if (!hostname_text(ep.host) && !ipv6_text(ep.host) && tolerate_known_finding("bracketed-host-unvalidated")) return;
  require(hostname_text(ep.host) || ipv6_text(ep.host), "the host is a hostname, IPv4 or IPv6 address", ep.host);
  check_redacted(ep);
}

}  // namespace expiry::fuzz
