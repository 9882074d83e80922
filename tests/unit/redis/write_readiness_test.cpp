// Unit tests of WriteReadiness (src/redis/write_readiness.h): what makes a node not ready for
// writes, and what makes it ready again.
#include "redis/write_readiness.h"

#include <gtest/gtest.h>

#include "redis/info_text.h"

namespace expiry {
namespace {

Reply error(const std::string& text) { return Reply::of(Reply::Type::Error, text); }

TEST(WriteReadiness, AReplicaOrAMasterWithoutItsMasterIsNotReadyAtOnce) {
  for (const char* refusal : {"READONLY You can't write against a read only replica.",
                              "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
                              "NOREPLICAS Not enough good replicas to write.",
                              "OOM command not allowed when used memory > 'maxmemory'."}) {
    WriteReadiness w;
    std::string why;
    ASSERT_TRUE(w.ready(why));
    w.on_failure(error(refusal), "sweep");
    EXPECT_FALSE(w.ready(why)) << refusal;
    EXPECT_NE(why.find("refuses writes"), std::string::npos) << why;
    EXPECT_NE(why.find(std::string(refusal).substr(0, 8)), std::string::npos) << why;
    EXPECT_TRUE(w.refuses_writes());
    w.on_success();
    EXPECT_TRUE(w.ready(why)) << "a write that succeeds makes it ready again";
  }
}

TEST(WriteReadiness, ARoleThatIsNotMasterIsNotReadyUntilItIsMasterAgain) {
  WriteReadiness w;
  std::string why;
  w.on_role("slave");
  EXPECT_FALSE(w.ready(why));
  EXPECT_NE(why.find("ROLE \"slave\""), std::string::npos) << why;
  w.on_role("master");
  EXPECT_TRUE(w.ready(why));
}

TEST(WriteReadiness, OtherFailuresCountOnlyInARow) {
  WriteReadiness w;
  std::string why;
  for (int i = 1; i < WriteReadiness::kFailuresInARow; ++i) {
    w.on_failure(error("ERR expiry: something"), "sweep");
    EXPECT_TRUE(w.ready(why)) << i;
  }
  w.on_success();
  for (int i = 1; i <= WriteReadiness::kFailuresInARow; ++i) w.on_failure(error("NOPERM no"), "sweep");
  EXPECT_FALSE(w.ready(why));
  EXPECT_NE(why.find("3 times in a row"), std::string::npos) << why;
  EXPECT_FALSE(w.refuses_writes());
  w.on_success();
  EXPECT_TRUE(w.ready(why));
}

TEST(WriteReadiness, TransientAndMovingRepliesDoNotCount) {
  WriteReadiness w;
  std::string why;
  for (int i = 0; i < 10; ++i) {
    for (const char* text : {"LOADING Redis is loading", "BUSY Redis is busy", "MOVED 1 127.0.0.1:7000",
                             "ASK 1 127.0.0.1:7000", "TRYAGAIN Multiple keys", "CLUSTERDOWN The cluster is down"}) {
      w.on_failure(error(text), "sweep");
    }
    w.on_failure(Reply::io_error("connection lost"), "sweep");
  }
  EXPECT_TRUE(w.ready(why)) << why;
}

TEST(InfoText, FieldValuesAreFoundByWholeName) {
  const std::string info = "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nrole_x:no\r\n";
  EXPECT_EQ(info_field(info, "role"), "slave");
  EXPECT_EQ(info_field(info, "master_host"), "127.0.0.1");
  EXPECT_EQ(info_field(info, "master"), "");
  EXPECT_EQ(info_field("role:master", "role"), "master");
  EXPECT_EQ(info_field("", "role"), "");
}

}  // namespace
}  // namespace expiry
