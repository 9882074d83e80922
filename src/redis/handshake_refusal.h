// What to tell the user when Redis refused to let a connection in: its credentials (WRONGPASS),
// the lack of them (NOAUTH, whichever command met it first), a permission the connection needs
// (NOPERM), or another handshake step (SELECT of a database that does not exist). Pure.
#pragma once

#include <string>

#include "redis/reply.h"

namespace expiry {

// "Redis at WHERE refused ...: <Redis's words> (<the setting to fix>)". Names the server, never
// the command that met the refusal: which command a program sends first is an internal detail
// (a NOAUTH can answer INFO, CLIENT SETNAME or PING alike). `where` is the endpoint as safe to
// log (RedisEndpoint::redacted() or where()); empty, the message says "Redis refused ...".
std::string handshake_refusal_message(const std::string& where, const Reply& reply);

}  // namespace expiry
