// The one classifier of Redis error replies: every caller switches on the kind instead of
// matching error texts (compare redis-plus-plus parse_error). Pure.
#pragma once

#include <string_view>

#include "redis/reply.h"

namespace expiry {

enum class RedisErrorKind {
  None,             // not an error
  Io,               // no reply: the connection failed or was lost
  NoAuth,           // NOAUTH: a password is required
  WrongPass,        // WRONGPASS / invalid password / AUTH without a password configured
  NoPermission,     // NOPERM: the ACL user may not run this command or touch this key
  UnknownCommand,   // the command does not exist or was renamed away
  FunctionMissing,  // the function library is not loaded
  TaskNotPending,   // expiry_v1 refused to change a task that is not pending (fired, cancelled, unknown)
  BusyGroup,        // the consumer group exists already
  NoGroup,          // the stream or its consumer group does not exist
  WrongType,        // WRONGTYPE
  Loading,          // LOADING: the server is loading its dataset
  ReadOnly,         // READONLY: a replica
  OutOfMemory,      // OOM under maxmemory
  MaxClients,       // the server is at maxclients and closes the connection
  Busy,             // BUSY: a script or function runs too long
  MasterDown,       // MASTERDOWN: a replica without its master
  NoReplicas,       // NOREPLICAS: min-replicas-to-write not met (a master fenced off, e.g. mid-failover)
  TryAgain,         // TRYAGAIN (cluster slot migration)
  Moved,            // MOVED <slot> <host:port>: the slot lives on another primary
  Ask,              // ASK <slot> <host:port>: this key is moving; ask the target once
  CrossSlot,        // CROSSSLOT, or a script touching keys of another slot
  ClusterDown,      // CLUSTERDOWN: the cluster cannot serve the slot now
  Migrating,        // expiry_v1 met a key of a slot being migrated and wrote nothing for it
  Other,
};

RedisErrorKind classify(const Reply& reply);
// The kind of an error text as Redis sends it (without the leading '-').
RedisErrorKind classify_error_text(std::string_view text);

// The kind of the Redis error a message carries: the message itself as an error text, or the
// text after a ": " (how the blocking client prefixes a refused call, "GET k: LOADING ...", and
// how Reply::describe embeds an error reply, "GET k: unexpected reply error: LOADING ..."); None
// when it carries none. For callers that only have an exception's message.
RedisErrorKind classify_error_in_message(std::string_view message);

// The server refused our credentials, or refused to run without them: retrying with the same
// settings cannot succeed.
bool is_auth_refusal(RedisErrorKind kind);
// A state of the server that passes by itself (loading, a busy script, a full client table,
// a failover in progress, a lost connection): retry with backoff.
bool is_transient(RedisErrorKind kind);

// The reply says the server kept the call from running, not that anything is wrong with what
// was asked: a transient state (above), a missing ACL rule (NOPERM, or a function's "The user
// executing the script can't ..." / the expiry library's "the Redis user may not run ..."),
// refused credentials, or a function library that is not loaded. The same call can succeed
// later unchanged, once the server or its configuration is fixed.
bool blames_the_server(const Reply& reply);

const char* to_string(RedisErrorKind kind);

}  // namespace expiry
