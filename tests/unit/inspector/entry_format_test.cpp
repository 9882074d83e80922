// Unit tests of expiry-ctl tail's rendering of stream entries (src/inspector/entry_format.h), the
// order it merges entry ids in, and the reversible escaping it uses (src/base/text_escape.h).
#include "inspector/entry_format.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/text_escape.h"

namespace expiry {
namespace {

using namespace std::string_literals;
using Fields = std::vector<std::pair<std::string, std::string>>;

// ---------------------------------------------------------------- escaping

TEST(EscapeTextReversible, BackslashIsEscapedSoEscapesCannotBeForged) {
  EXPECT_EQ(escape_text_reversible("a\\nb"), "a\\\\nb");  // backslash, n
  EXPECT_EQ(escape_text_reversible("a\nb"), "a\\nb");     // a line break
  EXPECT_EQ(escape_text_reversible("\\x41"), "\\\\x41");
  EXPECT_EQ(escape_text_reversible("\xFF"), "\\xff");
  EXPECT_EQ(escape_text_reversible("caf\xC3\xA9 \t\r\x01\x7F"), "caf\xC3\xA9 \\t\\r\\x01\\x7f");
  EXPECT_EQ(escape_text("a\\nb"), "a\\nb") << "the log format keeps its own rule";
}

// The characters that can break or disguise a line are escaped like controls, byte by byte:
// NEL (U+0085), the line and paragraph separators, the bidi overrides and isolates, the BOM.
TEST(EscapeText, SeparatorsBidiControlsAndTheBomAreEscapedLikeC1Controls) {
  EXPECT_EQ(escape_text("a\xC2\x85" "b"), "a\\xc2\\x85b");                    // U+0085 NEL
  EXPECT_EQ(escape_text("a\xE2\x80\xA8" "b"), "a\\xe2\\x80\\xa8b");           // U+2028
  EXPECT_EQ(escape_text("a\xE2\x80\xA9" "b"), "a\\xe2\\x80\\xa9b");           // U+2029
  EXPECT_EQ(escape_text("evil\xE2\x80\xAE" "gnp.exe"), "evil\\xe2\\x80\\xaegnp.exe");  // U+202E
  EXPECT_EQ(escape_text("\xE2\x81\xA6" "x"), "\\xe2\\x81\\xa6x");             // U+2066
  EXPECT_EQ(escape_text("\xEF\xBB\xBF" "x"), "\\xef\\xbb\\xbfx");             // U+FEFF
  EXPECT_EQ(escape_text_reversible("\xE2\x80\x8F"), "\\xe2\\x80\\x8f");       // U+200F
  // Other non-ASCII text is kept as it is.
  EXPECT_EQ(escape_text("\xE2\x80\x94 \xE2\x82\xAC \xC2\xA0"), "\xE2\x80\x94 \xE2\x82\xAC \xC2\xA0");
}

// ---------------------------------------------------------------- tokens

TEST(EntryToken, PlainValuesAreBare) {
  EXPECT_EQ(format_entry_token("order:42"), "order:42");
  EXPECT_EQ(format_entry_token("caf\xC3\xA9-\xF0\x9F\x98\x80"), "caf\xC3\xA9-\xF0\x9F\x98\x80");
  EXPECT_EQ(format_entry_token("{0}"), "{0}");
}

TEST(EntryToken, SpacesQuotesAndEqualsAreQuoted) {
  EXPECT_EQ(format_entry_token("order 42"), R"("order 42")");
  EXPECT_EQ(format_entry_token(" "), R"(" ")");
  EXPECT_EQ(format_entry_token(""), R"("")");
  EXPECT_EQ(format_entry_token("say \"hi\""), R"("say \"hi\"")");
  EXPECT_EQ(format_entry_token("\""), R"("\"")");
  EXPECT_EQ(format_entry_token("a=b"), R"("a=b")");
  // Spaces that are not ASCII are quoted too: U+00A0, U+2009 thin space, U+3000.
  EXPECT_EQ(format_entry_token("a\xC2\xA0" "b"), "\"a\xC2\xA0" "b\"");
  EXPECT_EQ(format_entry_token("a\xE2\x80\x89" "b"), "\"a\xE2\x80\x89" "b\"");
  EXPECT_EQ(format_entry_token("a\xE3\x80\x80" "b"), "\"a\xE3\x80\x80" "b\"");
}

TEST(EntryToken, BackslashNAndALineBreakDiffer) {
  EXPECT_EQ(format_entry_token("a\\nb"), "a\\\\nb");
  EXPECT_EQ(format_entry_token("a\nb"), "a\\nb");
  EXPECT_NE(format_entry_token("a\\nb"), format_entry_token("a\nb"));
  EXPECT_EQ(format_entry_token("a \\ b"), R"("a \\ b")");
  EXPECT_EQ(format_entry_token("tab\there"), "tab\\there") << "an escaped tab is not a space";
  EXPECT_EQ(format_entry_token("x\xFFy"), "x\\xffy");
}

// ---------------------------------------------------------------- text lines

TEST(EntryText, RelayFieldsFirstLateMsThenOthersThenPayload) {
  const Fields fields = {{"payload", "hello world"}, {"fired_ms", "1007"}, {"created_ms", "900"},
                         {"id", "t1"},               {"due_ms", "1000"},   {"via", "event"}};
  EXPECT_EQ(format_stream_entry("1-0", fields),
            "1-0 id=t1 via=event due_ms=1000 fired_ms=1007 late_ms=7 created_ms=900 payload=hello world");
}

TEST(EntryText, IdsWithSpacesAreQuoted) {
  const Fields fields = {{"id", "order 42"}, {"via", "sweep"}, {"payload", "p"}};
  EXPECT_EQ(format_stream_entry("5-1", fields), R"(5-1 id="order 42" via=sweep payload=p)");
  // An id that imitates the next field stays one token.
  EXPECT_EQ(format_stream_entry("5-2", {{"id", "a via=event"}}), R"(5-2 id="a via=event")");
}

TEST(EntryText, BackslashesAndLineBreaksPrintDifferently) {
  const std::string literal = format_stream_entry("1-0", {{"id", "a\\nb"}, {"payload", "x\\ny"}});
  const std::string real = format_stream_entry("1-0", {{"id", "a\nb"}, {"payload", "x\ny"}});
  EXPECT_EQ(literal, "1-0 id=a\\\\nb payload=x\\\\ny");
  EXPECT_EQ(real, "1-0 id=a\\nb payload=x\\ny");
  EXPECT_EQ(real.find('\n'), std::string::npos);
}

TEST(EntryText, PayloadRunsToTheEndUnquoted) {
  EXPECT_EQ(format_stream_entry("1-0", {{"payload", R"({"n": 1, "s": "a b"})"}}),
            R"(1-0 payload={"n": 1, "s": "a b"})");
  EXPECT_EQ(format_stream_entry("1-0", {{"id", "t"}, {"payload", ""}}), "1-0 id=t payload=");
  EXPECT_EQ(format_stream_entry("1-0", {{"payload", "\0\xFF\r\n"s}}), "1-0 payload=\\x00\\xff\\r\\n");
}

TEST(EntryText, OtherNamesAndValuesAreTokensToo) {
  EXPECT_EQ(format_stream_entry("1-0", {{"undeliverable_reason", "stream holds a string"}, {"k=v", ""}}),
            R"(1-0 undeliverable_reason="stream holds a string" "k=v"="")");
}

TEST(EntryText, LateMsOnlyWhenComputable) {
  EXPECT_EQ(format_stream_entry("1-0", {{"due_ms", "10"}, {"fired_ms", "x"}}), "1-0 due_ms=10 fired_ms=x");
  EXPECT_EQ(format_stream_entry("1-0", {{"due_ms", "-9223372036854775808"}, {"fired_ms", "1"}}),
            "1-0 due_ms=-9223372036854775808 fired_ms=1")
      << "an overflowing difference is left out";
  EXPECT_EQ(format_stream_entry("1-0", {{"due_ms", "10"}, {"fired_ms", "4"}}), "1-0 due_ms=10 fired_ms=4 late_ms=-6");
  // Scheduled with a due time in the past: its "lateness" is only how far back that time was.
  EXPECT_EQ(format_stream_entry("1-0", {{"due_ms", "1000"}, {"fired_ms", "1800000000000"}, {"created_ms", "1799999999990"}}),
            "1-0 due_ms=1000 fired_ms=1800000000000 created_ms=1799999999990");
  EXPECT_EQ(format_stream_entry("1-0", {{"due_ms", "1000"}, {"fired_ms", "1007"}, {"created_ms", "900"}}),
            "1-0 due_ms=1000 fired_ms=1007 late_ms=7 created_ms=900");
}

// ---------------------------------------------------------------- JSON

nlohmann::json parse_json(const std::string& line) {
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  return nlohmann::json::parse(line);
}

TEST(EntryJson, EveryFieldAsStoredWithEntryIdAndLateMs) {
  const Fields fields = {{"id", "order 42"}, {"payload", "two\nlines \\n"}, {"due_ms", "1000"},
                         {"fired_ms", "1007"}, {"via", "event"},             {"missing_payload", "absent"}};
  const std::string line = format_stream_entry_json("1700-3", fields);
  EXPECT_EQ(line.rfind(R"({"entry_id":"1700-3","late_ms":7,"fields":{"id":"order 42",)", 0), 0u) << line;
  const auto j = parse_json(line);
  EXPECT_EQ(j["entry_id"], "1700-3");
  EXPECT_EQ(j["late_ms"], 7);
  ASSERT_EQ(j["fields"].size(), 6u);
  EXPECT_EQ(j["fields"]["id"], "order 42");
  EXPECT_EQ(j["fields"]["payload"], "two\nlines \\n");
  EXPECT_EQ(j["fields"]["due_ms"], "1000") << "values are the strings Redis stores";
  EXPECT_EQ(j["fields"]["missing_payload"], "absent");
  EXPECT_FALSE(j.contains("fields_b64"));
}

TEST(EntryJson, LateMsIsNullWhenNotComputable) {
  EXPECT_TRUE(parse_json(format_stream_entry_json("1-0", {{"id", "x"}}))["late_ms"].is_null());
  EXPECT_TRUE(parse_json(format_stream_entry_json("1-0", {{"due_ms", "1"}, {"fired_ms", "soon"}}))["late_ms"].is_null());
  EXPECT_TRUE(parse_json(format_stream_entry_json("1-0", {}))["fields"].empty());
}

TEST(EntryJson, ValuesThatAreNotUtf8GoToFieldsB64) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  const auto j = parse_json(format_stream_entry_json("1-0", {{"id", "bin"}, {"payload", bytes}, {"x", "\xC3"}}));
  EXPECT_EQ(j["fields"], nlohmann::json({{"id", "bin"}}));
  ASSERT_EQ(j["fields_b64"].size(), 2u);
  EXPECT_EQ(base64_decode(j["fields_b64"]["payload"].get<std::string>()), bytes);
  EXPECT_EQ(j["fields_b64"]["x"], "ww==");
  // Valid UTF-8 with controls stays text (JSON escapes it).
  const auto text = parse_json(format_stream_entry_json("1-0", {{"payload", "\0\x01\t\xC3\xA9"s}}));
  EXPECT_EQ(text["fields"]["payload"], "\0\x01\t\xC3\xA9"s);
}

TEST(EntryJson, ADuplicateNameKeepsItsLastValue) {
  const auto j = parse_json(format_stream_entry_json("1-0", {{"id", "first"}, {"payload", "\xFF"}, {"id", "second"},
                                                            {"payload", "text"}}));
  EXPECT_EQ(j["fields"], nlohmann::json({{"id", "second"}, {"payload", "text"}}));
  EXPECT_FALSE(j.contains("fields_b64"));
}

TEST(EntryJson, NamesAndEntryIdsThatAreNotUtf8AreReplaced) {
  const std::string line = format_stream_entry_json("1-\xFF", {{"n\xFF", "v"}});
  const auto j = parse_json(line);
  EXPECT_EQ(j["entry_id"], "1-\xEF\xBF\xBD");
  EXPECT_EQ(j["fields"]["n\xEF\xBF\xBD"], "v");
}

TEST(EntryIdBefore, OrdersByTimeThenSequenceNotByText) {
  EXPECT_TRUE(entry_id_before("999-0", "1000-0"));
  EXPECT_FALSE(entry_id_before("1000-0", "999-0"));
  EXPECT_TRUE(entry_id_before("1000-2", "1000-10"));
  EXPECT_FALSE(entry_id_before("1000-1", "1000-1"));
  EXPECT_TRUE(entry_id_before("1000", "1000-1"));
  EXPECT_TRUE(entry_id_before("18446744073709551614-0", "18446744073709551615-0"));
}

TEST(EntryIdBefore, IdsThatDoNotParseComeLastInTextOrder) {
  EXPECT_TRUE(entry_id_before("5-0", "x"));
  EXPECT_FALSE(entry_id_before("x", "5-0"));
  EXPECT_TRUE(entry_id_before("a", "b"));
  EXPECT_FALSE(entry_id_before("99999999999999999999999-0", "1-0"));  // overflows: not an id
}

TEST(EntryIdBefore, SortsAMergedPollIntoTimeOrder) {
  std::vector<std::string> ids = {"1700000000002-0", "1700000000001-1", "1700000000001-0", "1700000000010-0"};
  std::sort(ids.begin(), ids.end(), [](const std::string& a, const std::string& b) { return entry_id_before(a, b); });
  EXPECT_EQ(ids, (std::vector<std::string>{"1700000000001-0", "1700000000001-1", "1700000000002-0", "1700000000010-0"}));
}

}  // namespace
}  // namespace expiry
