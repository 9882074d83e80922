// See redis_error.h. Keyed on the error prefix Redis sends (server.c's shared error objects);
// the few errors that share the generic "ERR" prefix are told apart by their fixed text.
#include "redis/redis_error.h"

namespace expiry {

namespace {

bool starts_with(std::string_view text, std::string_view head) { return text.substr(0, head.size()) == head; }

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

RedisErrorKind classify_error_text(std::string_view text) {
  struct Prefix {
    std::string_view head;
    RedisErrorKind kind;
  };
  static constexpr Prefix kPrefixes[] = {
      {"NOAUTH", RedisErrorKind::NoAuth},         {"WRONGPASS", RedisErrorKind::WrongPass},
      {"NOPERM", RedisErrorKind::NoPermission},   {"BUSYGROUP", RedisErrorKind::BusyGroup},
      {"NOGROUP", RedisErrorKind::NoGroup},       {"WRONGTYPE", RedisErrorKind::WrongType},
      {"LOADING", RedisErrorKind::Loading},       {"READONLY", RedisErrorKind::ReadOnly},
      {"OOM", RedisErrorKind::OutOfMemory},       {"BUSY", RedisErrorKind::Busy},
      {"MASTERDOWN", RedisErrorKind::MasterDown}, {"TRYAGAIN", RedisErrorKind::TryAgain},
      {"MOVED", RedisErrorKind::Moved},           {"ASK", RedisErrorKind::Ask},
      {"CROSSSLOT", RedisErrorKind::CrossSlot},   {"CLUSTERDOWN", RedisErrorKind::ClusterDown},
      {"NOREPLICAS", RedisErrorKind::NoReplicas},
  };
  for (const auto& p : kPrefixes) {
    if (starts_with(text, p.head) && (text.size() == p.head.size() || text[p.head.size()] == ' ')) return p.kind;
  }
  if (starts_with(text, "ERR ")) {
    if (starts_with(text, "ERR unknown command")) return RedisErrorKind::UnknownCommand;
    if (starts_with(text, "ERR Function not found")) return RedisErrorKind::FunctionMissing;
    if (starts_with(text, "ERR expiry: task ") && contains(text, " is not pending")) {
      return RedisErrorKind::TaskNotPending;  // src/lua/expiry/schedule.lua, reschedule
    }
    if (starts_with(text, "ERR expiry: migrating")) return RedisErrorKind::Migrating;  // src/lua/expiry/
    if (contains(text, "do not hash to the same slot")) return RedisErrorKind::CrossSlot;
    if (contains(text, "non local key in a cluster node")) return RedisErrorKind::Migrating;
    if (starts_with(text, "ERR max number of clients reached")) return RedisErrorKind::MaxClients;
    if (starts_with(text, "ERR invalid password") || starts_with(text, "ERR invalid username-password") ||
        (starts_with(text, "ERR AUTH") && contains(text, "without any password configured")) ||
        starts_with(text, "ERR Client sent AUTH, but no password is set")) {
      return RedisErrorKind::WrongPass;
    }
  }
  return RedisErrorKind::Other;
}

RedisErrorKind classify(const Reply& reply) {
  if (reply.type == Reply::Type::IoError) return RedisErrorKind::Io;
  if (reply.type != Reply::Type::Error) return RedisErrorKind::None;
  return classify_error_text(reply.str);
}

bool is_auth_refusal(RedisErrorKind kind) {
  return kind == RedisErrorKind::NoAuth || kind == RedisErrorKind::WrongPass || kind == RedisErrorKind::NoPermission;
}

RedisErrorKind classify_error_in_message(std::string_view message) {
  RedisErrorKind kind = classify_error_text(message);
  if (kind != RedisErrorKind::Other) return kind;
  constexpr std::string_view kMarker = ": ";  // "what: <error>", and "... reply error: <error>"
  for (size_t at = message.find(kMarker); at != std::string_view::npos; at = message.find(kMarker, at + 1)) {
    kind = classify_error_text(message.substr(at + kMarker.size()));
    if (kind != RedisErrorKind::Other) return kind;
  }
  return RedisErrorKind::None;
}

bool is_transient(RedisErrorKind kind) {
  switch (kind) {
    case RedisErrorKind::Io:
    case RedisErrorKind::Loading:
    case RedisErrorKind::ReadOnly:
    case RedisErrorKind::OutOfMemory:
    case RedisErrorKind::MaxClients:
    case RedisErrorKind::Busy:
    case RedisErrorKind::MasterDown:
    case RedisErrorKind::NoReplicas:
    case RedisErrorKind::TryAgain:
    case RedisErrorKind::ClusterDown:
    case RedisErrorKind::Migrating:
      return true;
    default:
      return false;
  }
}

bool blames_the_server(const Reply& reply) {
  const RedisErrorKind kind = classify(reply);
  if (is_transient(kind) || is_auth_refusal(kind) || kind == RedisErrorKind::FunctionMissing) return true;
  return kind == RedisErrorKind::Other && (starts_with(reply.str, "ERR The user executing the script can't") ||
                                           starts_with(reply.str, "ERR expiry: the Redis user may not run"));
}

const char* to_string(RedisErrorKind kind) {
  switch (kind) {
    case RedisErrorKind::None: return "none";
    case RedisErrorKind::Io: return "io";
    case RedisErrorKind::NoAuth: return "noauth";
    case RedisErrorKind::WrongPass: return "wrongpass";
    case RedisErrorKind::NoPermission: return "noperm";
    case RedisErrorKind::UnknownCommand: return "unknown-command";
    case RedisErrorKind::FunctionMissing: return "function-missing";
    case RedisErrorKind::TaskNotPending: return "task-not-pending";
    case RedisErrorKind::BusyGroup: return "busygroup";
    case RedisErrorKind::NoGroup: return "nogroup";
    case RedisErrorKind::WrongType: return "wrongtype";
    case RedisErrorKind::Loading: return "loading";
    case RedisErrorKind::ReadOnly: return "readonly";
    case RedisErrorKind::OutOfMemory: return "oom";
    case RedisErrorKind::MaxClients: return "maxclients";
    case RedisErrorKind::Busy: return "busy";
    case RedisErrorKind::MasterDown: return "masterdown";
    case RedisErrorKind::NoReplicas: return "noreplicas";
    case RedisErrorKind::TryAgain: return "tryagain";
    case RedisErrorKind::Moved: return "moved";
    case RedisErrorKind::Ask: return "ask";
    case RedisErrorKind::CrossSlot: return "crossslot";
    case RedisErrorKind::ClusterDown: return "clusterdown";
    case RedisErrorKind::Migrating: return "migrating";
    case RedisErrorKind::Other: return "other";
  }
  return "other";
}

}  // namespace expiry
