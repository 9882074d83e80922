// The message expiry-ctl schedule prints when the replicas fall short (src/ctl/replica_report.h).
#include "ctl/replica_report.h"

#include <string>

#include <gtest/gtest.h>

namespace expiry {
namespace {

TEST(ReplicaShortfallMessage, NamesWhatWasAskedWhatAcknowledgedAndTheRisk) {
  const std::string m = replica_shortfall_message(2, 1, 500, true);
  EXPECT_NE(m.find("only 1 of the 2 replicas asked for acknowledged the writes within 500 ms"), std::string::npos)
      << m;
  EXPECT_NE(m.find("fewest on any primary"), std::string::npos) << m;
  EXPECT_NE(m.find("docs/reliability.md"), std::string::npos) << m;
  const std::string single = replica_shortfall_message(1, 0, 1000, false);
  EXPECT_NE(single.find("only 0 of the 1 replica asked for"), std::string::npos) << single;
  EXPECT_EQ(single.find("primary written to"), std::string::npos) << single;
}

}  // namespace
}  // namespace expiry
