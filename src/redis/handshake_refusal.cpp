// See handshake_refusal.h.
#include "redis/handshake_refusal.h"

#include "redis/redis_error.h"

namespace expiry {

std::string handshake_refusal_message(const std::string& where, const Reply& reply) {
  const std::string redis = where.empty() ? std::string("Redis") : "Redis at " + where;
  switch (classify(reply)) {
    case RedisErrorKind::NoAuth:
      return redis + " refused to run commands without a password: " + reply.str +
             " (give the password in the URL, redis://:PASSWORD@host:port or redis://USER:PASSWORD@host:port, or "
             "in a password file: --password-file, password_file in a config file)";
    case RedisErrorKind::WrongPass:
      return redis + " refused the credentials: " + reply.str +
             " (check the user name and password in the URL or the password file: --password-file, password_file)";
    case RedisErrorKind::NoPermission:
      return redis + " refused the connection handshake: " + reply.str +
             " (the ACL user lacks a permission the connection needs; see docs/security.md)";
    default:
      return redis + " refused the connection handshake: " + reply.str;
  }
}

}  // namespace expiry
