// The stream-entry schema's decoders: parse_stream_entries and decode_forwarded_task.
#include "functions/stream_entry.h"

#include <gtest/gtest.h>

#include <limits>

namespace expiry {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

StreamEntry entry_of(Fields fields) {
  StreamEntry e;
  e.entry_id = "1-0";
  e.fields = std::move(fields);
  return e;
}

Fields forwarded_fields() {
  return {{"id", "order:7"}, {"payload", "{\"order_id\":\"7\"}"}, {"due_ms", "1700000000000"},
          {"fired_ms", "1700000000012"}, {"via", "sweep"}};
}

Reply string_reply(const std::string& s) { return Reply::of(Reply::Type::String, s); }

Reply array_reply(std::vector<Reply> elements) { return Reply::of_array(std::move(elements)); }

TEST(ForwardedTask, DecodesTheRequiredFields) {
  const auto task = decode_forwarded_task(entry_of(forwarded_fields()));
  ASSERT_TRUE(task);
  EXPECT_EQ(task->id, "order:7");
  EXPECT_EQ(task->payload, "{\"order_id\":\"7\"}");
  EXPECT_EQ(task->due_ms, 1700000000000LL);
  EXPECT_EQ(task->fired_ms, 1700000000012LL);
  EXPECT_EQ(task->via, entry_field::kViaSweep);
  EXPECT_FALSE(task->created_ms);
  EXPECT_FALSE(task->missing_payload);
  EXPECT_FALSE(task->undeliverable_stream);
  EXPECT_FALSE(task->undeliverable_reason);
  EXPECT_EQ(task->attempt, 1);  // absent: the first delivery
}

TEST(ForwardedTask, DecodesTheAttempt) {
  Fields f = forwarded_fields();
  f.emplace_back("attempt", "3");
  const auto task = decode_forwarded_task(entry_of(f));
  ASSERT_TRUE(task);
  EXPECT_EQ(task->attempt, 3);
  EXPECT_EQ(attempt_of(entry_of(f)), 3);
}

TEST(ForwardedTask, RejectsAnAttemptBelowOneOrNotAnInteger) {
  for (const char* bad : {"0", "-1", "", "1.5", "two", " 2"}) {
    Fields f = forwarded_fields();
    f.emplace_back("attempt", bad);
    EXPECT_FALSE(decode_forwarded_task(entry_of(f))) << bad;
    EXPECT_EQ(attempt_of(entry_of(f)), 1) << bad;  // the lenient reader counts it as the first
  }
}

TEST(AttemptOf, AbsentIsTheFirstDelivery) { EXPECT_EQ(attempt_of(entry_of(forwarded_fields())), 1); }

TEST(ForwardedTask, DecodesTheOptionalFieldsAndIgnoresOthers) {
  Fields f = forwarded_fields();
  f.emplace_back("created_ms", "-5");
  f.emplace_back("missing_payload", "absent");
  f.emplace_back("undeliverable_stream", "s:other");
  f.emplace_back("undeliverable_reason", "WRONGTYPE");
  f.emplace_back("extra", "kept out");
  const auto task = decode_forwarded_task(entry_of(f));
  ASSERT_TRUE(task);
  EXPECT_EQ(task->created_ms, -5);
  EXPECT_EQ(task->missing_payload, "absent");
  EXPECT_EQ(task->undeliverable_stream, "s:other");
  EXPECT_EQ(task->undeliverable_reason, "WRONGTYPE");
}

TEST(ForwardedTask, AnEmptyPayloadIsAPayload) {
  Fields f = forwarded_fields();
  f[1].second = "";
  const auto task = decode_forwarded_task(entry_of(f));
  ASSERT_TRUE(task);
  EXPECT_EQ(task->payload, "");
}

TEST(ForwardedTask, RejectsAMissingRequiredField) {
  for (size_t i = 0; i < forwarded_fields().size(); ++i) {
    Fields f = forwarded_fields();
    f.erase(f.begin() + static_cast<long>(i));
    EXPECT_FALSE(decode_forwarded_task(entry_of(f))) << "without " << forwarded_fields()[i].first;
  }
}

TEST(ForwardedTask, RejectsIntegersThatAreNotStrict) {
  for (const char* bad : {"", "+1", " 1", "1 ", "1.5", "1e3", "0x10", "9223372036854775808", "-"}) {
    for (const char* name : {"due_ms", "fired_ms", "created_ms"}) {
      Fields f = forwarded_fields();
      bool replaced = false;
      for (auto& [k, v] : f) {
        if (k == name) v = bad, replaced = true;
      }
      if (!replaced) f.emplace_back(name, bad);
      EXPECT_FALSE(decode_forwarded_task(entry_of(f))) << name << "=" << bad;
    }
  }
}

TEST(ForwardedTask, AcceptsTheInt64Range) {
  Fields f = forwarded_fields();
  f[2].second = "-9223372036854775808";
  f[3].second = "9223372036854775807";
  const auto task = decode_forwarded_task(entry_of(f));
  ASSERT_TRUE(task);
  EXPECT_EQ(task->due_ms, std::numeric_limits<long long>::min());
  EXPECT_EQ(task->fired_ms, std::numeric_limits<long long>::max());
}

TEST(ForwardedTask, RejectsAnEmptyVia) {
  Fields f = forwarded_fields();
  f[4].second = "";
  EXPECT_FALSE(decode_forwarded_task(entry_of(f)));
}

TEST(ForwardedTask, RejectsASchemaFieldGivenTwice) {
  for (const char* name : {"id", "payload", "due_ms", "via", "created_ms", "missing_payload", "attempt"}) {
    Fields f = forwarded_fields();
    f.emplace_back(name, "1");
    f.emplace_back(name, "1");
    EXPECT_FALSE(decode_forwarded_task(entry_of(f))) << name;
  }
}

TEST(StreamEntry, FieldReturnsTheFirstValueOrEmpty) {
  const StreamEntry e = entry_of({{"a", "1"}, {"a", "2"}});
  EXPECT_EQ(e.field("a"), "1");
  EXPECT_EQ(e.field("b"), "");
}

TEST(ParseStreamEntries, SkipsDeletedAndMalformedEntries) {
  const Reply body = array_reply({
      array_reply({string_reply("1-0"), array_reply({string_reply("id"), string_reply("t1"), string_reply("odd")})}),
      array_reply({string_reply("2-0"), Reply{}}),  // deleted: nil body
      string_reply("not an entry"),
      array_reply({string_reply("3-0")}),
      array_reply({string_reply("4-0"), array_reply({})}),
  });
  const auto entries = parse_stream_entries(body);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].entry_id, "1-0");
  EXPECT_EQ(entries[0].fields, (Fields{{"id", "t1"}}));
  EXPECT_EQ(entries[0].deliveries, 1u);
  EXPECT_EQ(entries[1].entry_id, "4-0");
  EXPECT_TRUE(entries[1].fields.empty());
  EXPECT_TRUE(parse_stream_entries(string_reply("x")).empty());
}

}  // namespace
}  // namespace expiry
