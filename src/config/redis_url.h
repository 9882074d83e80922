// Parsing of redis:// and rediss:// (TLS) URLs, [user:password@]host:port[/db], into an endpoint.
#pragma once

#include <string>
#include <string_view>

#include "config/sentinel_settings.h"
#include "config/tls_settings.h"

namespace expiry {

struct RedisEndpoint {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user;      // empty: no ACL user (AUTH with the password alone)
  std::string password;  // empty: no AUTH; never logged, see redacted()
  int db = 0;
  TlsSettings tls;       // tls.enabled for rediss://; the rest comes from the tls_* settings
  // sentinel.enabled(): host and port are those of the master the sentinels named last (the
  // URL's are not used); TLS applies to the sentinels and the data nodes alike.
  SentinelSettings sentinel;

  // The URL with the password replaced by "***", safe to log.
  std::string redacted() const;
  // What the settings point at, safe to log: redacted(), or through Sentinel (before the
  // sentinels have named a master, the URL's host is a placeholder) the scheme, user and db with
  // "sentinel master NAME via HOST:PORT,...".
  std::string where() const;
};

// Throws ConfigError naming what is wrong. Accepts "redis://" and "rediss://" (TLS on), an optional "user:password@" or ":password@" part (percent-decoded), an IPv4 address, a
// hostname or a bracketed IPv6 address, an optional port (default 6379) and an optional /db.
RedisEndpoint parse_redis_url(std::string_view url);

}  // namespace expiry
