// Unit tests of the one Redis error classifier (src/redis/redis_error.h), fed the error texts real
// Redis servers send (without the leading '-'), and of the retry policy built on its kinds.
#include "redis/redis_error.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace expiry {
namespace {

using K = RedisErrorKind;

Reply error_reply(std::string text) {
  Reply r;
  r.type = Reply::Type::Error;
  r.str = std::move(text);
  return r;
}

const std::vector<K> kAllKinds = {K::None,       K::Io,        K::NoAuth,     K::WrongPass,      K::NoPermission,
                                  K::UnknownCommand, K::FunctionMissing, K::TaskNotPending, K::BusyGroup, K::NoGroup, K::WrongType,
                                  K::Loading,    K::ReadOnly,  K::OutOfMemory, K::MaxClients,    K::Busy,
                                  K::MasterDown, K::NoReplicas, K::TryAgain,  K::Moved, K::Ask, K::CrossSlot, K::ClusterDown,
                                  K::Migrating, K::Other};

struct Case {
  const char* text;
  K kind;
};

// ---------------------------------------------------------------- classify_error_text

TEST(ClassifyErrorText, AuthenticationRefusals) {
  const Case cases[] = {
      {"NOAUTH Authentication required.", K::NoAuth},
      {"NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH "
       "<user> <pass> option can be used to authenticate the client and select the RESP protocol version at the "
       "same time",
       K::NoAuth},
      {"WRONGPASS invalid username-password pair or user is disabled.", K::WrongPass},
      {"ERR AUTH <password> called without any password configured for the default user. Are you sure your "
       "configuration is correct?",
       K::WrongPass},
      {"ERR invalid password", K::WrongPass},                           // Redis before 6
      {"ERR Client sent AUTH, but no password is set", K::WrongPass},   // Redis before 6
      {"ERR invalid username-password pair", K::WrongPass},
  };
  for (const auto& c : cases) EXPECT_EQ(classify_error_text(c.text), c.kind) << c.text;
}

TEST(ClassifyErrorText, PermissionRefusals) {
  const Case cases[] = {
      {"NOPERM this user has no permissions to run the 'fcall' command", K::NoPermission},            // 7.0
      {"NOPERM this user has no permissions to access one of the keys used as arguments", K::NoPermission},
      {"NOPERM User relay has no permissions to run the 'xgroup|create' command", K::NoPermission},  // 7.2
      {"NOPERM No permissions to access a key", K::NoPermission},
  };
  for (const auto& c : cases) EXPECT_EQ(classify_error_text(c.text), c.kind) << c.text;
}

TEST(ClassifyErrorText, ServerStatesThatPass) {
  const Case cases[] = {
      {"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", K::Busy},
      {"BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.", K::Busy},
      {"LOADING Redis is loading the dataset in memory", K::Loading},
      {"READONLY You can't write against a read only replica.", K::ReadOnly},
      {"OOM command not allowed when used memory > 'maxmemory'.", K::OutOfMemory},
      {"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", K::MasterDown},
      {"TRYAGAIN Multiple keys request during rehashing of slot", K::TryAgain},
      {"NOREPLICAS Not enough good replicas to write.", K::NoReplicas},
      {"ERR max number of clients reached", K::MaxClients},
  };
  for (const auto& c : cases) EXPECT_EQ(classify_error_text(c.text), c.kind) << c.text;
}

TEST(ClassifyErrorText, CommandAndDataErrors) {
  const Case cases[] = {
      {"BUSYGROUP Consumer Group name already exists", K::BusyGroup},
      {"NOGROUP No such key 'expiry:stream' or consumer group 'workers' in XREADGROUP with GROUP option",
       K::NoGroup},
      {"WRONGTYPE Operation against a key holding the wrong kind of value", K::WrongType},
      {"ERR unknown command 'FUNCTION', with args beginning with: 'LOAD' 'REPLACE' ", K::UnknownCommand},
      {"ERR unknown command 'x', with args beginning with: ", K::UnknownCommand},
      {"ERR unknown command `x`, with args beginning with: ", K::UnknownCommand},  // Redis 6 quotes
      {"ERR Function not found", K::FunctionMissing},
  };
  for (const auto& c : cases) EXPECT_EQ(classify_error_text(c.text), c.kind) << c.text;
}

TEST(ClassifyErrorText, TheLibraryRefusingATaskThatIsNotPending) {
  EXPECT_EQ(classify_error_text("ERR expiry: task a is not pending (already fired, cancelled or never scheduled); "
                                "nothing was changed"),
            K::TaskNotPending);
  EXPECT_EQ(classify_error_text("ERR expiry: task a is not pending"), K::TaskNotPending);
  EXPECT_EQ(classify_error_text("ERR expiry: task id contains a control character"), K::Other);
  EXPECT_EQ(classify_error_text("ERR something else is not pending"), K::Other);  // not the library's refusal
  Reply reply;
  reply.type = Reply::Type::Error;
  reply.str = "ERR expiry: task order:7 is not pending (already fired, cancelled or never scheduled); nothing was changed";
  EXPECT_EQ(classify(reply), K::TaskNotPending);
  EXPECT_FALSE(is_transient(K::TaskNotPending));
  EXPECT_FALSE(is_auth_refusal(K::TaskNotPending));
}

TEST(ClassifyErrorText, EverythingElseIsOther) {
  for (const char* text : {
           "ERR other",
           "ERR syntax error",
           "ERR expiry: task id contains a control character",
           "ERR unknown subcommand 'X'. Try FUNCTION HELP.",  // not an unknown command
           "ERR Error running script (call to f_1234): @user_function:1: oops",
           "ERR",
           "",
           "NOSCRIPT No matching script. Please use EVAL.",
           "BUSYKEY Target key name already exists.",  // BUSY is a prefix of the word, not the word
           "OOMX something",
           "LOADINGX",
           "NOAUTHX",
           "err max number of clients reached",  // the prefixes are case-sensitive, as Redis sends them
           " NOAUTH Authentication required.",
       }) {
    EXPECT_EQ(classify_error_text(text), K::Other) << "'" << text << "' is " << to_string(classify_error_text(text));
  }
}

TEST(ClassifyErrorText, APrefixWithoutMessageIsItsKind) {
  EXPECT_EQ(classify_error_text("BUSY"), K::Busy);
  EXPECT_EQ(classify_error_text("LOADING"), K::Loading);
  EXPECT_EQ(classify_error_text("NOAUTH"), K::NoAuth);
  EXPECT_EQ(classify_error_text("BUSYGROUP"), K::BusyGroup);
}

// ---------------------------------------------------------------- classify

TEST(Classify, OnlyErrorRepliesAreClassifiedByText) {
  EXPECT_EQ(classify(error_reply("NOAUTH Authentication required.")), K::NoAuth);
  EXPECT_EQ(classify(error_reply("ERR max number of clients reached")), K::MaxClients);
  EXPECT_EQ(classify(error_reply("ERR other")), K::Other);

  Reply status;
  status.type = Reply::Type::Status;
  status.str = "OK";
  EXPECT_EQ(classify(status), K::None);
  status.str = "NOAUTH looks like an error but is a status";
  EXPECT_EQ(classify(status), K::None);

  Reply text;
  text.type = Reply::Type::String;
  text.str = "LOADING";
  EXPECT_EQ(classify(text), K::None);

  Reply integer;
  integer.type = Reply::Type::Integer;
  integer.integer = 1;
  EXPECT_EQ(classify(integer), K::None);

  EXPECT_EQ(classify(Reply{}), K::None);  // Nil

  Reply array;
  array.type = Reply::Type::Array;
  array.elements.push_back(error_reply("ERR inside an array"));
  EXPECT_EQ(classify(array), K::None);
}

TEST(Classify, AnIoErrorIsIoWhateverItsReason) {
  EXPECT_EQ(classify(Reply::io_error("Connection reset by peer")), K::Io);
  EXPECT_EQ(classify(Reply::io_error("NOAUTH Authentication required.")), K::Io);
  EXPECT_EQ(classify(Reply::io_error("")), K::Io);
}

// ---------------------------------------------------------------- policy

TEST(RedisErrorPolicy, AuthRefusalsAreExactlyNoAuthWrongPassAndNoPerm) {
  for (K kind : kAllKinds) {
    const bool expected = kind == K::NoAuth || kind == K::WrongPass || kind == K::NoPermission;
    EXPECT_EQ(is_auth_refusal(kind), expected) << to_string(kind);
  }
  EXPECT_TRUE(is_auth_refusal(classify(error_reply("WRONGPASS invalid username-password pair or user is disabled."))));
  EXPECT_TRUE(is_auth_refusal(classify(error_reply(
      "ERR AUTH <password> called without any password configured for the default user. Are you sure your "
      "configuration is correct?"))));
  EXPECT_FALSE(is_auth_refusal(classify(error_reply("ERR max number of clients reached"))));
}

TEST(ClassifyErrorText, ClusterRedirectionsAndSlotErrors) {
  const Case cases[] = {
      {"MOVED 3999 127.0.0.1:6381", K::Moved},
      {"ASK 3999 127.0.0.1:6381", K::Ask},
      {"CROSSSLOT Keys in request don't hash to the same slot", K::CrossSlot},
      {"CLUSTERDOWN The cluster is down", K::ClusterDown},
      {"CLUSTERDOWN Hash slot not served", K::ClusterDown},
      {"ERR Script attempted to access keys that do not hash to the same slot script: x", K::CrossSlot},
      {"ERR Script attempted to access a non local key in a cluster node script: x", K::Migrating},
      {"ERR expiry: migrating: slot 15495 is being moved; nothing was written", K::Migrating},
  };
  for (const auto& c : cases) EXPECT_EQ(classify_error_text(c.text), c.kind) << c.text;
}

TEST(RedisErrorPolicy, TransientKindsPassByThemselves) {
  for (K kind : kAllKinds) {
    const bool expected = kind == K::Io || kind == K::Loading || kind == K::ReadOnly || kind == K::OutOfMemory ||
                          kind == K::MaxClients || kind == K::Busy || kind == K::MasterDown || kind == K::TryAgain ||
                          kind == K::NoReplicas || kind == K::ClusterDown || kind == K::Migrating;
    EXPECT_EQ(is_transient(kind), expected) << to_string(kind);
  }
  EXPECT_TRUE(is_transient(classify(error_reply("ERR max number of clients reached"))));
  EXPECT_TRUE(is_transient(classify(Reply::io_error("Connection refused"))));
  EXPECT_FALSE(is_transient(classify(error_reply("BUSYGROUP Consumer Group name already exists"))));
  EXPECT_FALSE(is_transient(classify(error_reply("ERR Function not found"))));
}

TEST(RedisErrorPolicy, NoKindIsBothAnAuthRefusalAndTransient) {
  for (K kind : kAllKinds) EXPECT_FALSE(is_auth_refusal(kind) && is_transient(kind)) << to_string(kind);
}

TEST(RedisErrorPolicy, BlamesTheServerForRefusalsNotForTheCallsContent) {
  for (const char* text : {
           "NOPERM this user has no permissions to access one of the keys used as arguments",
           "NOPERM this user has no permissions to run the 'fcall' command",
           "ERR The user executing the script can't run this command or subcommand script: order_cancel, on "
           "@user_function:12.",
           "ERR The user executing the script can't access at least one of the keys script: x, on @user_function:3.",
           "ERR expiry: the Redis user may not run XADD orders:x (see docs/security.md); nothing was written",
           "ERR Function not found",
           "LOADING Redis is loading the dataset in memory",
           "READONLY You can't write against a read only replica.",
           "OOM command not allowed when used memory > 'maxmemory'.",
           "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
           "CLUSTERDOWN The cluster is down",
           "NOAUTH Authentication required.",
       }) {
    EXPECT_TRUE(blames_the_server(error_reply(text))) << text;
  }
  EXPECT_TRUE(blames_the_server(Reply::io_error("Connection reset by peer")));
  for (const char* text : {
           "WRONGTYPE Operation against a key holding the wrong kind of value",
           "ERR wrong number of arguments for 'hset' command",
           "ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: order_cancel",
           "ERR expiry: task order:1 is not pending",
           "ERR orders: bad reason 'The user executing the script can't'",  // the text, but not at the start
       }) {
    EXPECT_FALSE(blames_the_server(error_reply(text))) << text;
  }
  Reply ok;
  ok.type = Reply::Type::Status;
  ok.str = "OK";
  EXPECT_FALSE(blames_the_server(ok));
}

TEST(RedisErrorPolicy, EveryKindHasItsOwnName) {
  std::vector<std::string> names;
  for (K kind : kAllKinds) {
    const std::string name = to_string(kind);
    EXPECT_FALSE(name.empty());
    for (const auto& seen : names) EXPECT_NE(name, seen);
    names.push_back(name);
  }
}

}  // namespace
}  // namespace expiry

namespace expiry {
namespace {

TEST(RedisErrorInMessage, FindsTheErrorAMessageCarries) {
  EXPECT_EQ(classify_error_in_message("LOADING Redis is loading the dataset in memory"), RedisErrorKind::Loading);
  EXPECT_EQ(classify_error_in_message("GET expiry:buckets: unexpected reply error: LOADING Redis is loading"),
            RedisErrorKind::Loading);
  EXPECT_EQ(classify_error_in_message("FCALL expiry_schedule: unexpected reply error: READONLY You can't write"),
            RedisErrorKind::ReadOnly);
  EXPECT_EQ(classify_error_in_message("GET expiry:buckets: LOADING Redis is loading the dataset in memory"),
            RedisErrorKind::Loading)
      << "a refused call as the blocking client reports it (the layout probe at a reconnect)";
  EXPECT_EQ(classify_error_in_message("task id 'LOADING x' is not pending"), RedisErrorKind::None)
      << "only where an error reply is embedded";
  EXPECT_EQ(classify_error_in_message("unexpected reply 42"), RedisErrorKind::None);
}

}  // namespace
}  // namespace expiry
