// Decoding Sentinel's answers and +switch-master messages, and the resend policy of the sync
// clients, without sockets.
#include "protocol/sentinel_reply.h"

#include <gtest/gtest.h>

#include "protocol/resend_policy.h"

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
