// Unit tests of the message for a connection Redis refused (src/redis/handshake_refusal.h).
#include "redis/handshake_refusal.h"

#include <gtest/gtest.h>

namespace expiry {
namespace {

Reply error_reply(const char* text) { return Reply::of(Reply::Type::Error, text); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(HandshakeRefusalMessage, AMissingPasswordSaysWhoRefusedAndWhereThePasswordGoes) {
  const std::string m =
      handshake_refusal_message("redis://127.0.0.1:6390/0", error_reply("NOAUTH Authentication required."));
  EXPECT_EQ(m.rfind("Redis at redis://127.0.0.1:6390/0 refused to run commands without a password: "
                    "NOAUTH Authentication required. (give the password in the URL, redis://:PASSWORD@host:port",
                    0),
            0u)
      << m;
  EXPECT_TRUE(has(m, "--password-file")) << m;
  EXPECT_TRUE(has(m, "password_file")) << m;
}

TEST(HandshakeRefusalMessage, NamesNoCommand) {
  for (const char* text : {"NOAUTH Authentication required.",
                           "WRONGPASS invalid username-password pair or user is disabled.",
                           "NOPERM this user has no permissions to run the 'select' command"}) {
    const std::string m = handshake_refusal_message("redis://h:1/0", error_reply(text));
    SCOPED_TRACE(m);
    for (const char* command : {"INFO", "cluster", "CLIENT", "SETNAME", "PING", "HELLO"}) {
      EXPECT_FALSE(has(m.substr(0, m.find(text)), command)) << command;
    }
    EXPECT_TRUE(has(m, text));
  }
}

TEST(HandshakeRefusalMessage, WrongCredentialsAndMissingPermissionsSayWhatToFix) {
  const std::string wrong =
      handshake_refusal_message("redis://app:***@h:1/0", error_reply("WRONGPASS invalid username-password pair"));
  EXPECT_EQ(wrong.rfind("Redis at redis://app:***@h:1/0 refused the credentials: WRONGPASS", 0), 0u) << wrong;
  EXPECT_TRUE(has(wrong, "check the user name and password")) << wrong;
  const std::string noperm = handshake_refusal_message("redis://h:1/0", error_reply("NOPERM no select"));
  EXPECT_TRUE(has(noperm, "refused the connection handshake: NOPERM no select")) << noperm;
  EXPECT_TRUE(has(noperm, "docs/security.md")) << noperm;
}

TEST(HandshakeRefusalMessage, OtherRefusalsCarryRedisWordsAlone) {
  EXPECT_EQ(handshake_refusal_message("redis://h:1/9", error_reply("ERR DB index is out of range")),
            "Redis at redis://h:1/9 refused the connection handshake: ERR DB index is out of range");
  EXPECT_EQ(handshake_refusal_message("", error_reply("NOAUTH Authentication required.")).rfind("Redis refused ", 0),
            0u);
}

}  // namespace
}  // namespace expiry
