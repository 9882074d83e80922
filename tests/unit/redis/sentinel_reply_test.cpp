// Decoding Sentinel's answers and +switch-master messages, and the resend policy of the sync
// clients, without sockets.
#include "redis/sentinel_reply.h"

#include <gtest/gtest.h>

#include "redis/resend_policy.h"

namespace expiry {
namespace {

Reply text(const std::string& s) { return Reply::of(Reply::Type::String, s); }

TEST(SentinelReply, MasterAddress) {
  auto a = decode_master_address(Reply::of_array({text("127.0.0.1"), text("6380")}));
  ASSERT_TRUE(a.address);
  EXPECT_EQ(*a.address, (NodeAddress{"127.0.0.1", 6380}));
  EXPECT_FALSE(a.unknown);
}

TEST(SentinelReply, NilMeansAnUnknownMaster) {
  auto a = decode_master_address(Reply{});
  EXPECT_TRUE(a.unknown);
  EXPECT_FALSE(a.address);
}

TEST(SentinelReply, ErrorsAndMalformedRepliesAreErrors) {
  auto e = decode_master_address(Reply::of(Reply::Type::Error, "NOAUTH Authentication required."));
  EXPECT_FALSE(e.address);
  EXPECT_FALSE(e.unknown);
  EXPECT_EQ(e.error, "NOAUTH Authentication required.");
  for (const Reply& bad : {Reply::of_array({text("127.0.0.1")}), Reply::of_array({text("h"), text("0")}),
                           Reply::of_array({text(""), text("6379")}), text("127.0.0.1:6379")}) {
    auto m = decode_master_address(bad);
    EXPECT_FALSE(m.address);
    EXPECT_NE(m.error.find("malformed"), std::string::npos);
  }
}

Reply fields(const std::vector<std::pair<std::string, std::string>>& kv) {
  std::vector<Reply> out;
  for (const auto& [k, v] : kv) {
    out.push_back(text(k));
    out.push_back(text(v));
  }
  return Reply::of_array(out);
}

TEST(SentinelReply, MasterStateGivesAddressEpochAndAFailoverInProgress) {
  auto calm = decode_master_state(fields({{"name", "mymaster"}, {"ip", "127.0.0.1"}, {"port", "6380"},
                                          {"flags", "master"}, {"config-epoch", "3"}}));
  ASSERT_TRUE(calm.address) << calm.error;
  EXPECT_EQ(*calm.address, (NodeAddress{"127.0.0.1", 6380}));
  EXPECT_EQ(calm.config_epoch, 3);
  EXPECT_FALSE(calm.failover_in_progress);
  EXPECT_FALSE(calm.down);

  auto busy = decode_master_state(fields({{"ip", "127.0.0.1"}, {"port", "6380"},
                                          {"flags", "master,failover_in_progress"}, {"config-epoch", "4"}}));
  ASSERT_TRUE(busy.address);
  EXPECT_TRUE(busy.failover_in_progress);
  EXPECT_EQ(busy.config_epoch, 4);

  auto down = decode_master_state(fields({{"ip", "h"}, {"port", "1"}, {"flags", "master,s_down,o_down"}}));
  EXPECT_TRUE(down.down);
  EXPECT_EQ(down.config_epoch, 0) << "an absent config-epoch counts as 0";
  // A flag that merely contains the word is not it.
  EXPECT_FALSE(decode_master_state(fields({{"ip", "h"}, {"port", "1"}, {"flags", "master,no_failover_in_progress_x"}}))
                   .failover_in_progress);
}

TEST(SentinelReply, MasterStateUnknownNamesErrorsAndMalformedReplies) {
  auto unknown = decode_master_state(Reply::of(Reply::Type::Error, "ERR No such master with that name"));
  EXPECT_TRUE(unknown.unknown);
  EXPECT_FALSE(unknown.address);
  auto noauth = decode_master_state(Reply::of(Reply::Type::Error, "NOAUTH Authentication required."));
  EXPECT_FALSE(noauth.unknown);
  EXPECT_EQ(noauth.error, "NOAUTH Authentication required.");
  for (const Reply& bad : {fields({{"ip", "h"}, {"flags", "master"}}), fields({{"ip", "h"}, {"port", "1"}}),
                           Reply::of_array({text("ip")}), text("x"), fields({{"ip", ""}, {"port", "1"}, {"flags", "master"}})}) {
    auto m = decode_master_state(bad);
    EXPECT_FALSE(m.address);
    EXPECT_NE(m.error.find("malformed"), std::string::npos) << bad.describe();
  }
}

TEST(SentinelReply, HealthyReplicasAreThoseUpAndInSync) {
  const Reply replicas = Reply::of_array({
      fields({{"ip", "a"}, {"port", "1"}, {"flags", "slave"}, {"master-link-status", "ok"}}),
      fields({{"ip", "b"}, {"port", "2"}, {"flags", "slave,s_down"}, {"master-link-status", "ok"}}),
      fields({{"ip", "c"}, {"port", "3"}, {"flags", "slave,disconnected"}, {"master-link-status", "ok"}}),
      fields({{"ip", "d"}, {"port", "4"}, {"flags", "slave"}, {"master-link-status", "err"}}),
      fields({{"ip", "e"}, {"port", "5"}, {"flags", "slave"}, {"master-link-status", "ok"}}),
  });
  EXPECT_EQ(count_healthy_replicas(replicas), 2);
  EXPECT_EQ(count_healthy_replicas(Reply::of_array({})), 0);
  EXPECT_FALSE(count_healthy_replicas(Reply::of(Reply::Type::Error, "ERR No such master with that name")));
  EXPECT_FALSE(count_healthy_replicas(Reply::of_array({text("x")})));
}

TEST(SentinelReply, Role) {
  EXPECT_EQ(role_of(Reply::of_array({text("master"), Reply::of_integer(0), Reply::of_array({})})), "master");
  EXPECT_EQ(role_of(Reply::of_array({text("slave"), text("127.0.0.1")})), "slave");
  EXPECT_EQ(role_of(Reply::of(Reply::Type::Error, "NOPERM")), "");
  EXPECT_EQ(role_of(Reply::of_array({})), "");
}

TEST(SentinelReply, SwitchMaster) {
  auto s = parse_switch_master("mymaster 127.0.0.1 6379 127.0.0.1 6380");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->master, "mymaster");
  EXPECT_EQ(s->from, (NodeAddress{"127.0.0.1", 6379}));
  EXPECT_EQ(s->to, (NodeAddress{"127.0.0.1", 6380}));
  EXPECT_FALSE(parse_switch_master(""));
  EXPECT_FALSE(parse_switch_master("mymaster 127.0.0.1 6379 127.0.0.1"));
  EXPECT_FALSE(parse_switch_master("mymaster 127.0.0.1 6379 127.0.0.1 x"));
  EXPECT_FALSE(parse_switch_master("mymaster  127.0.0.1 6379 127.0.0.1 6380"));
  EXPECT_FALSE(parse_switch_master("mymaster 127.0.0.1 6379 127.0.0.1 6380 extra"));
}

TEST(SentinelReply, InstanceEvents) {
  auto m = parse_instance_event("master mymaster 127.0.0.1 6379");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, "master");
  EXPECT_EQ(m->name, "mymaster");
  EXPECT_EQ(m->address, (NodeAddress{"127.0.0.1", 6379}));
  auto r = parse_instance_event("slave 127.0.0.1:6380 127.0.0.1 6380 @ mymaster 127.0.0.1 6379");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->type, "slave");
  EXPECT_FALSE(parse_instance_event("master mymaster 127.0.0.1"));
  EXPECT_FALSE(parse_instance_event("master mymaster 127.0.0.1 port"));
  EXPECT_FALSE(parse_instance_event("slave a 127.0.0.1 6380 # mymaster 127.0.0.1 6379"));
  EXPECT_FALSE(parse_instance_event(""));
}

TEST(ResendPolicy, ReadsAndIdempotentSchedulesMayBeResent) {
  EXPECT_TRUE(resend_is_safe({"zrange", "k", "0", "-1"}));
  EXPECT_TRUE(resend_is_safe({"FCALL_RO", "expiry_stats", "0"}));
  EXPECT_TRUE(resend_is_safe({"FCALL", "expiry_schedule", "3", "s", "t", "h", "id", "delay", "5", "p"}));
  EXPECT_TRUE(resend_is_safe({"FCALL", "expiry_schedule_many", "1", "s"}));
  EXPECT_TRUE(resend_is_safe({"FCALL", "expiry_reschedule", "3", "s", "t", "h", "id", "at", "1000"}));
  EXPECT_TRUE(resend_is_safe({"FUNCTION", "LIST"}));
}

// The v2 names the programs send, as the v1 names above.
TEST(ResendPolicy, TheV2NamesOfTheIdempotentSchedulesMayBeResent) {
  EXPECT_TRUE(resend_is_safe({"FCALL", "expiry_v2_schedule", "3", "s", "t", "h", "id", "delay", "5", "p"}));
  EXPECT_TRUE(resend_is_safe({"FCALL", "expiry_v2_schedule_many", "1", "s"}));
  EXPECT_TRUE(resend_is_safe({"FCALL", "expiry_v2_reschedule", "3", "s", "t", "h", "id", "at", "1000"}));
  EXPECT_FALSE(resend_is_safe({"FCALL", "expiry_v2_reschedule", "3", "s", "t", "h", "id", "delay", "1000"}));
  EXPECT_FALSE(resend_is_safe({"FCALL", "expiry_v2_cancel", "3", "s", "t", "h", "id"}));
  EXPECT_FALSE(resend_is_safe({"FCALL", "expiry_v2_retry", "5", "a", "b", "c", "d", "e"}));
  EXPECT_FALSE(resend_is_safe({"FCALL", "expiry_v2_claim", "4", "a", "b", "c", "d"}));
}

TEST(ResendPolicy, OtherWritesAreNot) {
  EXPECT_FALSE(resend_is_safe({}));
  EXPECT_FALSE(resend_is_safe({"FCALL", "expiry_cancel", "3", "s", "t", "h", "id"}));
  EXPECT_FALSE(resend_is_safe({"FCALL", "expiry_reschedule", "3", "s", "t", "h", "id", "delay", "1000"}));
  EXPECT_FALSE(resend_is_safe({"FCALL", "expiry_retry", "5", "a", "b", "c", "d", "e"}));
  EXPECT_FALSE(resend_is_safe({"FCALL", "expiry_replay_dead", "4", "a", "b", "c", "d"}));
  EXPECT_FALSE(resend_is_safe({"XADD", "s", "*", "f", "v"}));
  EXPECT_FALSE(resend_is_safe({"FUNCTION", "LOAD", "x"}));
  EXPECT_FALSE(resend_is_safe({"DEL", "k"}));
}

}  // namespace
}  // namespace expiry
