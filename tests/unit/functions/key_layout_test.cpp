// Unit tests of the key layout, keyspace-event parsing and id/namespace validation
// (src/functions/key_layout.h).
#include "functions/key_layout.h"

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace expiry {
namespace {

using namespace std::string_literals;

// ---------------------------------------------------------------- key names

TEST(KeyLayout, KeyNamesOfDefaultBucket) {
  KeyLayout keys("expiry");
  EXPECT_EQ(keys.ns(), "expiry");
  EXPECT_EQ(keys.schedule_key(), "expiry:{0}:schedule");
  EXPECT_EQ(keys.trigger_key("job-1"), "expiry:{0}:t:job-1");
  EXPECT_EQ(keys.shadow_key("job-1"), "expiry:{0}:task:job-1");
  EXPECT_EQ(keys.wake_channel(), "expiry:{0}:wake");
  EXPECT_EQ(keys.ring_channel(), "expiry:{0}:ring");
  EXPECT_EQ(keys.health_channel("host-42"), "expiry:health:host-42");
  EXPECT_EQ(keys.default_stream(), "expiry:stream");
}

TEST(KeyLayout, KeyNamesOfCustomNamespaceAndBucket) {
  KeyLayout keys("billing.v2", 7);
  EXPECT_EQ(keys.ns(), "billing.v2");
  EXPECT_EQ(keys.schedule_key(), "billing.v2:{7}:schedule");
  EXPECT_EQ(keys.trigger_key("a:b"), "billing.v2:{7}:t:a:b");
  EXPECT_EQ(keys.shadow_key("a:b"), "billing.v2:{7}:task:a:b");
  EXPECT_EQ(keys.wake_channel(), "billing.v2:{7}:wake");
  EXPECT_EQ(keys.ring_channel(), "billing.v2:{7}:ring");
  EXPECT_EQ(keys.default_stream(), "billing.v2:stream");
}

TEST(KeyLayout, AllKeysOfATaskShareTheHashTag) {
  KeyLayout keys("ns");
  const std::string tag = "{0}";
  for (const std::string& k : {keys.schedule_key(), keys.trigger_key("x"), keys.shadow_key("x")}) {
    // Redis hashes the text between the first '{' and the next '}'.
    const auto open = k.find('{');
    ASSERT_NE(open, std::string::npos) << k;
    EXPECT_EQ(k.substr(open, 3), tag) << k;
  }
}

// ---------------------------------------------------------------- trigger key parsing

TEST(KeyLayout, TriggerKeyRoundTrip) {
  KeyLayout keys("expiry");
  const std::string ids[] = {
      "x",
      "job-1",
      "a:b:c",
      ":leading:and:trailing:",
      "t:nested",
      "}:t:fake",
      "with space",
      "  ",
      "{braces}",
      "{0}:t:x",
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80",  // é € 😀
      "\xE6\x97\xA5\xE6\x9C\xAC",                  // 日本
      std::string(256, 'z'),
  };
  for (const auto& id : ids) {
    const std::string key = keys.trigger_key(id);
    auto got = keys.id_from_trigger_key(key);
    ASSERT_TRUE(got.has_value()) << key;
    EXPECT_EQ(*got, id) << key;
  }
}

TEST(KeyLayout, TriggerKeyOfAnyBucketIsAccepted) {
  KeyLayout keys("expiry");
  EXPECT_EQ(keys.id_from_trigger_key("expiry:{0}:t:a").value_or("?"), "a");
  EXPECT_EQ(keys.id_from_trigger_key("expiry:{12}:t:a").value_or("?"), "a");
  EXPECT_EQ(keys.id_from_trigger_key("expiry:{99999}:t:a").value_or("?"), "a");
  EXPECT_EQ(KeyLayout("expiry", 3).id_from_trigger_key("expiry:{0}:t:b").value_or("?"), "b");
}

TEST(KeyLayout, TriggerKeyOfOtherNamespaceIsRejected) {
  KeyLayout keys("expiry");
  EXPECT_FALSE(keys.id_from_trigger_key("other:{0}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("Expiry:{0}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("exp:{0}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("xexpiry:{0}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("pre:expiry:{0}:t:x"));
}

TEST(KeyLayout, NamespaceThatIsAPrefixOfAnotherIsRejected) {
  EXPECT_FALSE(KeyLayout("expiry").id_from_trigger_key("expiry2:{0}:t:x"));
  EXPECT_FALSE(KeyLayout("expiry").id_from_trigger_key("expiry.v2:{0}:t:x"));
  EXPECT_FALSE(KeyLayout("expiry").id_from_trigger_key("expiry:x:{0}:t:x"));
  // And the other way round: the longer namespace does not claim the shorter one's keys.
  EXPECT_FALSE(KeyLayout("expiry2").id_from_trigger_key("expiry:{0}:t:x"));
  EXPECT_EQ(KeyLayout("expiry2").id_from_trigger_key("expiry2:{0}:t:x").value_or("?"), "x");
}

TEST(KeyLayout, OtherKeysOfTheNamespaceAreRejected) {
  KeyLayout keys("expiry");
  EXPECT_FALSE(keys.id_from_trigger_key(keys.schedule_key()));
  EXPECT_FALSE(keys.id_from_trigger_key(keys.shadow_key("x")));
  EXPECT_FALSE(keys.id_from_trigger_key(keys.shadow_key("t:x")));
  EXPECT_FALSE(keys.id_from_trigger_key(keys.wake_channel()));
  EXPECT_FALSE(keys.id_from_trigger_key(keys.default_stream()));
  EXPECT_FALSE(keys.id_from_trigger_key(keys.health_channel("h")));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{0}:T:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{0}:tt:x"));
}

TEST(KeyLayout, EmptyIdIsRejected) {
  KeyLayout keys("expiry");
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{0}:t:"));
  EXPECT_FALSE(keys.id_from_trigger_key(keys.trigger_key("")));
}

TEST(KeyLayout, MalformedBucketsAreRejected) {
  KeyLayout keys("expiry");
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{a}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{1a}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{-1}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{ 1}:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{123456}:t:x"));  // more than 5 digits
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:0:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{0:t:x"));
  EXPECT_FALSE(keys.id_from_trigger_key("expiry:{0}t:x"));
}

TEST(KeyLayout, TruncatedKeysAreRejected) {
  KeyLayout keys("expiry");
  for (const char* k : {"", "e", "expiry", "expiry:", "expiry:{", "expiry:{0", "expiry:{0}", "expiry:{0}:",
                        "expiry:{0}:t"}) {
    EXPECT_FALSE(keys.id_from_trigger_key(k)) << "key: " << k;
  }
}

// ---------------------------------------------------------------- task keys (expiry-ctl check)

TEST(KeyLayout, ParseTaskKeyTellsTriggersFromShadowHashes) {
  KeyLayout keys("expiry");
  const std::string trigger = keys.trigger_key("a:b {c}");  // the id points into the key
  auto t = keys.parse_task_key(trigger);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->kind, TaskKeyKind::Trigger);
  EXPECT_EQ(t->bucket, 0);
  EXPECT_EQ(t->id, "a:b {c}");
  const std::string shadow = keys.shadow_key("t:x");
  auto s = keys.parse_task_key(shadow);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, TaskKeyKind::Shadow);
  EXPECT_EQ(s->id, "t:x");
  // The trigger key of the id "ask:x" is not the shadow hash of "x".
  auto tricky = keys.parse_task_key("expiry:{0}:t:ask:x");
  ASSERT_TRUE(tricky);
  EXPECT_EQ(tricky->kind, TaskKeyKind::Trigger);
  EXPECT_EQ(tricky->id, "ask:x");
  auto other_bucket = keys.parse_task_key("expiry:{42}:task:y");
  ASSERT_TRUE(other_bucket);
  EXPECT_EQ(other_bucket->bucket, 42);
  EXPECT_EQ(KeyLayout("expiry", other_bucket->bucket).shadow_key(other_bucket->id), "expiry:{42}:task:y");
}

TEST(KeyLayout, ParseTaskKeyRejectsOtherKeys) {
  KeyLayout keys("expiry");
  for (const std::string& k :
       {keys.schedule_key(), keys.wake_channel(), keys.default_stream(), std::string("expiry:{0}:task:"),
        std::string("expiry:{0}:t:"), std::string("expiry:{0}:tomato"), std::string("expiry:{0}:tasks:x"),
        std::string("expiry:{0}:ta:x"), std::string("other:{0}:task:x"), std::string("expiry2:{0}:task:x"),
        std::string("expiry:{123456}:task:x"), std::string("expiry:{99999999999999999999}:t:x"),
        std::string("expiry:{a}:task:x"), std::string("expiry:{}:t:x")}) {
    EXPECT_FALSE(keys.parse_task_key(k)) << k;
  }
}

TEST(KeyLayout, TaskKeysPatternCoversBothKinds) {
  EXPECT_EQ(KeyLayout("expiry").task_keys_pattern(), "expiry:{*}:t*");
  EXPECT_EQ(KeyLayout("jobs.v2").task_keys_pattern(), "jobs.v2:{*}:t*");
}

// ---------------------------------------------------------------- expired channel parsing

TEST(ExpiredChannel, ParsesDbNumber) {
  EXPECT_EQ(db_from_expired_channel("__keyevent@0__:expired"), 0);
  EXPECT_EQ(db_from_expired_channel("__keyevent@15__:expired"), 15);
  EXPECT_EQ(db_from_expired_channel("__keyevent@123__:expired"), 123);
  EXPECT_EQ(db_from_expired_channel("__keyevent@15999__:expired"), 15999);
}

TEST(ExpiredChannel, RejectsOtherChannels) {
  EXPECT_FALSE(db_from_expired_channel("__keyspace@0__:x"));
  EXPECT_FALSE(db_from_expired_channel("__keyspace@0__:expired"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@0__:del"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@0__:expire"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@0__:evicted"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@x__:expired"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@1x__:expired"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@-1__:expired"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@__:expired"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@123456__:expired"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@0__:expired "));
  EXPECT_FALSE(db_from_expired_channel(" __keyevent@0__:expired"));
  EXPECT_FALSE(db_from_expired_channel("__keyevent@0__:expiredx"));
  EXPECT_FALSE(db_from_expired_channel("expiry:{0}:wake"));
  EXPECT_FALSE(db_from_expired_channel(""));
}

// ---------------------------------------------------------------- namespace_error

TEST(NamespaceError, AcceptsAllowedCharacters) {
  for (const char* ns : {"expiry", "a", "A1", "my_app", "my-app", "my.app", "0", "a.b-c_d.E9"}) {
    EXPECT_FALSE(namespace_error(ns).has_value()) << ns << ": " << namespace_error(ns).value_or("");
  }
}

TEST(NamespaceError, LengthLimits) {
  EXPECT_TRUE(namespace_error("").has_value());
  EXPECT_FALSE(namespace_error(std::string(64, 'n')).has_value());
  auto err = namespace_error(std::string(65, 'n'));
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("64"), std::string::npos) << *err;
}

TEST(NamespaceError, RejectsOtherCharacters) {
  for (const std::string& ns : {"a b"s, "a:b"s, "a{b"s, "a}b"s, "a/b"s, "a*b"s, "a\nb"s, "a\0b"s, "caf\xC3\xA9"s, "a\x7f"s,
                                " a"s, "a@b"s}) {
    EXPECT_TRUE(namespace_error(ns).has_value()) << "ns: " << ns;
  }
}

// ---------------------------------------------------------------- task_id_error

TEST(TaskIdError, LengthLimitsInBytes) {
  EXPECT_TRUE(task_id_error("").has_value());
  EXPECT_FALSE(task_id_error("x").has_value());
  EXPECT_FALSE(task_id_error(std::string(256, 'a')).has_value());
  auto err = task_id_error(std::string(257, 'a'));
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("256"), std::string::npos) << *err;
  // The limit is in bytes, not characters: 128 two-byte characters fit, 129 do not.
  std::string two_byte;
  for (int i = 0; i < 128; ++i) two_byte += "\xC3\xA9";
  EXPECT_FALSE(task_id_error(two_byte).has_value());
  EXPECT_TRUE(task_id_error(two_byte + "\xC3\xA9").has_value());
  EXPECT_TRUE(task_id_error(two_byte + "a").has_value());  // 257 bytes
}

TEST(TaskIdError, AcceptsPrintableAndStructuralCharacters) {
  for (const std::string& id : {"job-1"s, "a:b:c"s, "with space"s, "{braces}"s, "\"quoted\""s, "back\\slash"s,
                                "*?[]"s, "~!@#$%^&()+="s, " "s}) {
    EXPECT_FALSE(task_id_error(id).has_value()) << "id: " << id << ": " << task_id_error(id).value_or("");
  }
}

TEST(TaskIdError, RejectsControlCharacters) {
  for (const std::string& id : {"a\nb"s, "\n"s, "a\rb"s, "a\tb"s, "a\0b"s, "\x01"s, "a\x1b[31m"s, "x\x1f"s,
                                "a\x7f"s, "\x7f"s}) {
    auto err = task_id_error(id);
    ASSERT_TRUE(err.has_value()) << "id with byte " << static_cast<int>(static_cast<unsigned char>(id.back()));
    EXPECT_NE(err->find("control"), std::string::npos) << *err;
  }
}

TEST(TaskIdError, AcceptsValidMultibyteUtf8) {
  for (const std::string& id : {
           "\xC2\xA0"s,                // U+00A0, smallest non-ASCII 2-byte... (no-break space)
           "\xC3\xA9t\xC3\xA9"s,       // été
           "\xDF\xBF"s,                // U+07FF, largest 2-byte
           "\xE0\xA0\x80"s,            // U+0800, smallest 3-byte
           "\xE2\x82\xAC"s,            // €
           "\xED\x9F\xBF"s,            // U+D7FF, just below the surrogates
           "\xEE\x80\x80"s,            // U+E000, just above the surrogates
           "\xEF\xBF\xBD"s,            // U+FFFD
           "\xF0\x90\x80\x80"s,        // U+10000, smallest 4-byte
           "\xF0\x9F\x98\x80"s,        // 😀
           "\xF4\x8F\xBF\xBF"s,        // U+10FFFF, largest code point
           "id-\xE6\x97\xA5\xE6\x9C\xAC-1"s,
       }) {
    EXPECT_FALSE(task_id_error(id).has_value()) << task_id_error(id).value_or("");
  }
}

TEST(TaskIdError, RejectsInvalidUtf8) {
  for (const std::string& id : {
           "\x80"s,                  // lone continuation byte
           "a\xBF"s,                 // lone continuation byte
           "\xC3"s,                  // truncated 2-byte sequence
           "\xC3x"s,                 // lead byte followed by ASCII
           "\xE2\x82"s,              // truncated 3-byte sequence
           "\xF0\x9F\x98"s,          // truncated 4-byte sequence
           "\xC0\x80"s,              // overlong NUL
           "\xC1\xBF"s,              // overlong 2-byte
           "\xC0\xAF"s,              // overlong '/'
           "\xE0\x80\xAF"s,          // overlong 3-byte '/'
           "\xE0\x9F\xBF"s,          // overlong 3-byte U+07FF
           "\xF0\x80\x80\xAF"s,      // overlong 4-byte '/'
           "\xF0\x8F\xBF\xBF"s,      // overlong 4-byte U+FFFF
           "\xED\xA0\x80"s,          // U+D800, high surrogate
           "\xED\xBF\xBF"s,          // U+DFFF, low surrogate
           "\xED\xA0\xBD\xED\xB8\x80"s,  // CESU-8 surrogate pair
           "\xF4\x90\x80\x80"s,      // U+110000, above the Unicode range
           "\xF5\x80\x80\x80"s,      // lead byte above F4
           "\xF8\x88\x80\x80\x80"s,  // 5-byte form
           "\xFC\x84\x80\x80\x80\x80"s,  // 6-byte form
           "\xFE"s,
           "\xFF"s,
           "ok\xE2\x82\xACok\xE2"s,  // valid then truncated at the end
       }) {
    auto err = task_id_error(id);
    ASSERT_TRUE(err.has_value()) << "id bytes: " << ::testing::PrintToString(id);
    EXPECT_NE(err->find("UTF-8"), std::string::npos) << *err;
  }
}


// A code point as UTF-8 bytes (valid scalar values only).
std::string utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string hex(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

TEST(TaskIdError, Utf8HelperOfThisTestMatchesKnownEncodings) {
  EXPECT_EQ(utf8(0x85), "\xC2\x85");
  EXPECT_EQ(utf8(0x2028), "\xE2\x80\xA8");
  EXPECT_EQ(utf8(0xFEFF), "\xEF\xBB\xBF");
  EXPECT_EQ(utf8(0x1F600), "\xF0\x9F\x98\x80");
}

TEST(TaskIdError, RejectsInvisibleAndLineBreakingCodePoints) {
  std::vector<char32_t> forbidden = {0x85, 0x2028, 0x2029, 0xFEFF, 0x061C, 0x200E, 0x200F};  // U+061C: ALM
  for (char32_t cp = 0x80; cp <= 0x9F; ++cp) forbidden.push_back(cp);    // C1 controls, NEL among them
  for (char32_t cp = 0x202A; cp <= 0x202E; ++cp) forbidden.push_back(cp);  // LRE RLE PDF LRO RLO
  for (char32_t cp = 0x2066; cp <= 0x2069; ++cp) forbidden.push_back(cp);  // LRI RLI FSI PDI
  for (char32_t cp : forbidden) {
    EXPECT_TRUE(is_forbidden_in_id(cp)) << hex(cp);
    for (const std::string& id : {utf8(cp), "order" + utf8(cp) + "42", "a" + utf8(cp)}) {
      auto err = task_id_error(id);
      ASSERT_TRUE(err.has_value()) << hex(cp) << " in " << ::testing::PrintToString(id);
      EXPECT_NE(err->find(hex(cp)), std::string::npos) << *err;
    }
  }
}

TEST(TaskIdError, AcceptsTheNeighboursOfForbiddenCodePoints) {
  for (char32_t cp : {
           char32_t{0x7E},    // ~, last printable ASCII
           char32_t{0xA0},    // no-break space, first after the C1 controls
           char32_t{0xA1},    // inverted exclamation mark
           char32_t{0x061B},  // Arabic semicolon, just below U+061C
           char32_t{0x061D},  // just above U+061C
           char32_t{0x200D},  // zero width joiner (emoji sequences need it)
           char32_t{0x2010},  // hyphen
           char32_t{0x2027},  // hyphenation point, just below U+2028
           char32_t{0x202F},  // narrow no-break space, just above U+202E
           char32_t{0x2030},  // per mille
           char32_t{0x2065},  // just below U+2066 (unassigned)
           char32_t{0x206A},  // just above U+2069
           char32_t{0xFEFE},  // just below U+FEFF
           char32_t{0xFF01},  // fullwidth exclamation mark
           char32_t{0x1F600}, // grinning face
       }) {
    EXPECT_FALSE(is_forbidden_in_id(cp)) << hex(cp);
    const std::string id = "id-" + utf8(cp) + "-1";
    EXPECT_FALSE(task_id_error(id).has_value()) << hex(cp) << ": " << task_id_error(id).value_or("");
  }
  // An emoji ZWJ sequence (family: man, woman, girl) and a flag (regional indicators).
  EXPECT_FALSE(task_id_error(utf8(0x1F468) + utf8(0x200D) + utf8(0x1F469) + utf8(0x200D) + utf8(0x1F467)));
  EXPECT_FALSE(task_id_error(utf8(0x1F1E9) + utf8(0x1F1EA)));
}

TEST(TaskIdError, ControlCheckComesBeforeTheCodePointCheck) {
  // An id with both a C0 control and a forbidden code point is reported for the control.
  auto err = task_id_error("a\n" + utf8(0x2028));
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("control"), std::string::npos) << *err;
}

// ---------------------------------------------------------------- task key space

TEST(TaskKeySpace, KeysOfAnyBucketOfTheNamespaceAreInside) {
  for (const char* key : {"expiry:{0}:task:b", "expiry:{12}:x", "expiry:{0}:schedule", "expiry:{0}:t:a",
                          "expiry:{0}:wake", "expiry:{99999}:", "expiry:{007}:task:b"}) {
    EXPECT_TRUE(in_task_key_space(key, "expiry")) << key;
    auto err = stream_name_error(key, "expiry");
    ASSERT_TRUE(err.has_value()) << key;
    EXPECT_NE(err->find("task key space"), std::string::npos) << *err;
    EXPECT_NE(err->find(key), std::string::npos) << *err;
  }
}

TEST(TaskKeySpace, OtherKeysAreOutside) {
  for (const char* key : {"expiry:stream", "expiry:stream:dead", "expiry:{x}:t", "expiry:{}:t", "expiry:{1a}:t",
                          "expiry:{0}", "expiry:{0}t", "expiry:{0", "other:{0}:task:b", "expiry{0}:task",
                          "expiry2:{0}:task:b", "xexpiry:{0}:task:b", "pre:expiry:{0}:task:b", "Expiry:{0}:task:b",
                          "orders:stream", "expiry", "expiry:", "expiry:{"}) {
    EXPECT_FALSE(in_task_key_space(key, "expiry")) << key;
    EXPECT_FALSE(stream_name_error(key, "expiry").has_value()) << key << ": " << stream_name_error(key, "expiry").value_or("");
  }
}

TEST(TaskKeySpace, DependsOnTheNamespace) {
  EXPECT_TRUE(in_task_key_space("billing.v2:{0}:task:x", "billing.v2"));
  EXPECT_FALSE(in_task_key_space("billing.v2:{0}:task:x", "expiry"));
  EXPECT_FALSE(in_task_key_space("expiry:{0}:task:x", "billing.v2"));
  // A namespace "expiry:{0}" cannot exist (namespace_error), but a stream of namespace "a" named
  // after the keys of namespace "a.b" is outside a's key space.
  EXPECT_FALSE(in_task_key_space("a.b:{0}:task:x", "a"));
}

TEST(TaskKeySpace, EmptyStreamNameIsAnError) {
  auto err = stream_name_error("", "expiry");
  ASSERT_TRUE(err.has_value());
  EXPECT_NE(err->find("empty"), std::string::npos) << *err;
}

}  // namespace
}  // namespace expiry
