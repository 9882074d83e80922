// Unit tests of expiry-ctl's bulk schedule file parsing and whole-file validation
// (src/ctl/bulk_file.h; a task's own checks are producer/task.h's).
#include "ctl/bulk_file.h"

#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "functions/key_layout.h"

namespace expiry {
namespace {

using namespace std::string_literals;

BulkLine task(const std::string& line) {
  BulkLine parsed = parse_bulk_line(line);
  EXPECT_EQ(parsed.kind, BulkLine::Kind::Task) << line << " -> " << parsed.error;
  return parsed;
}

// The error of an Invalid line ("" and a test failure if the line parsed).
std::string error_of(const std::string& line) {
  BulkLine parsed = parse_bulk_line(line);
  EXPECT_EQ(parsed.kind, BulkLine::Kind::Invalid) << line;
  return parsed.error;
}

BulkValidation validate(const std::string& text, size_t max_errors = kMaxBulkErrors) {
  std::istringstream in(text);
  return validate_bulk_stream(in, max_errors);
}

// ---------------------------------------------------------------- good lines

TEST(BulkLine, ScheduleOptionFields) {
  const Task r = task(
      R"({"id":"a","delay_ms":1,"max_late_ms":0,"debounce_max_ms":5000,)"
      R"("traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})").request;
  EXPECT_FALSE(r.options.if_absent);
  EXPECT_EQ(r.options.debounce_max_ms, 5000);
  EXPECT_EQ(r.options.max_late_ms, 0);
  EXPECT_EQ(r.options.traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_TRUE(task(R"({"id":"a","delay_ms":1,"if_absent":true})").request.options.if_absent);
  EXPECT_TRUE(task(R"({"id":"a","delay_ms":1,"if_absent":false})").request.options.empty());
  EXPECT_TRUE(task(R"({"id":"a","delay_ms":1})").request.options.empty());
}

TEST(BulkLine, ScheduleOptionFieldsAreValidated) {
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"if_absent":1})").find("if_absent must be true or false"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"debounce_max_ms":0})").find("debounce_max_ms must be an integer between 1"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"max_late_ms":-1})").find("max_late_ms must be an integer between 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"traceparent":7})").find("traceparent must be a string"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"traceparent":"00-zz"})").find("traceparent must be W3C"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"if_absent":true,"debounce_max_ms":5})").find("exclude each other"),
            std::string::npos);
}

TEST(BulkLine, DelayWithDefaults) {
  const auto r = task(R"({"id": "job-1", "delay_ms": 1500})").request;
  EXPECT_EQ(r.id, "job-1");
  EXPECT_EQ(r.mode, ScheduleMode::Delay);
  EXPECT_EQ(r.ms, 1500);
  EXPECT_EQ(r.payload, "");
  EXPECT_EQ(r.stream, "");
}

TEST(BulkLine, AtWithPayloadAndStream) {
  const auto r = task(R"({"stream":"orders:due","payload":"{\"n\":1}","at_ms":1700000000000,"id":"o-7"})").request;
  EXPECT_EQ(r.id, "o-7");
  EXPECT_EQ(r.mode, ScheduleMode::At);
  EXPECT_EQ(r.ms, 1700000000000LL);
  EXPECT_EQ(r.payload, R"({"n":1})");
  EXPECT_EQ(r.stream, "orders:due");
}

TEST(BulkLine, ZeroDelayAndBounds) {
  EXPECT_EQ(task(R"({"id":"a","delay_ms":0})").request.ms, 0);
  EXPECT_EQ(task(R"({"id":"a","at_ms":1})").request.ms, 1);
  EXPECT_EQ(task(R"({"id":"a","at_ms":253402300799999})").request.ms, kMaxTimeMs);
  EXPECT_EQ(task(R"({"id":"a","delay_ms":253402300799999})").request.ms, kMaxTimeMs);
}

TEST(BulkLine, TrailingCarriageReturnAndSurroundingSpaceAreFine) {
  EXPECT_EQ(task("{\"id\":\"a\",\"delay_ms\":1}\r").request.id, "a");
  EXPECT_EQ(task("  \t{\"id\":\"a\",\"delay_ms\":1}  ").request.id, "a");
}

TEST(BulkLine, UnicodeEscapesGiveUtf8Bytes) {
  // "\u00ff" is the code point U+00FF, stored as its UTF-8 bytes C3 BF: a valid id.
  const auto r = task(R"({"id":"caf\u00e9-\u00ff","delay_ms":1,"payload":"\u0000bin\u0001"})").request;
  EXPECT_EQ(r.id, "caf\xC3\xA9-\xC3\xBF");
  EXPECT_EQ(r.payload, "\0bin\x01"s);
  EXPECT_EQ(task(R"({"id":"\ud83d\ude00","delay_ms":1})").request.id, "\xF0\x9F\x98\x80");
}

TEST(BulkLine, RawUtf8IsFine) {
  EXPECT_EQ(task("{\"id\":\"\xE2\x82\xAC-1\",\"delay_ms\":1}").request.id, "\xE2\x82\xAC-1");
}

TEST(BulkLine, PayloadAtTheLimit) {
  const std::string payload(kMaxPayloadBytes, 'p');
  EXPECT_EQ(task(R"({"id":"a","delay_ms":1,"payload":")" + payload + "\"}").request.payload.size(),
            kMaxPayloadBytes);
}

TEST(BulkLine, IdAtTheLimit) {
  const std::string id(kMaxIdBytes, 'i');
  EXPECT_EQ(task(R"({"id":")" + id + R"(","delay_ms":1})").request.id, id);
}

TEST(BulkLine, PayloadB64CarriesAnyBytes) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  const std::string b64 =
      "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9Q"
      "UVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6Ch"
      "oqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy"
      "8/T19vf4+fr7/P3+/w==";
  const auto r = task(R"({"id":"bin","delay_ms":1,"payload_b64":")" + b64 + R"("})").request;
  EXPECT_EQ(r.payload, bytes);
  EXPECT_EQ(task(R"({"id":"e","delay_ms":1,"payload_b64":""})").request.payload, "");
  EXPECT_EQ(task(R"({"id":"e","delay_ms":1,"payload_b64":"Zm9vYmE="})").request.payload, "fooba");
}

TEST(BulkLine, PayloadB64AtTheLimit) {
  // 65536 bytes of 0xFF: "////" per 3 bytes, and 65536 = 3 * 21845 + 1.
  const std::string at_limit = std::string(21845 * 4, '/') + "/w==";
  EXPECT_EQ(task(R"({"id":"a","delay_ms":1,"payload_b64":")" + at_limit + "\"}").request.payload,
            std::string(kMaxPayloadBytes, '\xFF'));
  const std::string over = std::string(21845 * 4, '/') + "//8=";  // 65537 bytes
  const auto err = error_of(R"({"id":"a","delay_ms":1,"payload_b64":")" + over + "\"}");
  EXPECT_EQ(err, "payload_b64 decodes to 65537 bytes, larger than the limit of 65536");
}

TEST(BulkLine, PayloadB64MustBeStrictBase64) {
  EXPECT_EQ(error_of(R"({"id":"a","delay_ms":1,"payload_b64":"Zg"})"),
            "payload_b64 is not valid base64: length 2 is not a multiple of 4 (base64 needs its '=' padding)");
  EXPECT_EQ(error_of(R"({"id":"a","delay_ms":1,"payload_b64":"Zm9v Zg=="})"),
            "payload_b64 is not valid base64: invalid character ' ' at position 5");
  EXPECT_EQ(error_of(R"({"id":"a","delay_ms":1,"payload_b64":"Zm9v\nZg=="})"),
            "payload_b64 is not valid base64: invalid character '\\n' at position 5");
  EXPECT_EQ(error_of(R"({"id":"a","delay_ms":1,"payload_b64":"Zm9v-_=="})"),
            "payload_b64 is not valid base64: invalid character '-' at position 5");
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"payload_b64":"Zh=="})").find("non-zero unused bits"),
            std::string::npos);
  EXPECT_EQ(error_of(R"({"id":"a","delay_ms":1,"payload_b64":7})"),
            "payload_b64 must be a string of base64, got number");
}

TEST(BulkLine, PayloadAndPayloadB64AreMutuallyExclusive) {
  EXPECT_EQ(error_of(R"({"id":"a","delay_ms":1,"payload":"x","payload_b64":"eA=="})"),
            "payload and payload_b64 are mutually exclusive");
  EXPECT_EQ(error_of(R"({"payload_b64":"","id":"a","payload":"","delay_ms":1})"),
            "payload and payload_b64 are mutually exclusive");
}

TEST(BulkLine, PayloadMustBeAJsonString) {
  // A JSON document is not a payload: it goes in as a string (or as payload_b64).
  const auto err = error_of(R"({"id":"a","delay_ms":1,"payload":{"n":1}})");
  EXPECT_NE(err.find("payload must be a string, got object"), std::string::npos) << err;
  EXPECT_NE(err.find(R"("payload": "{\"n\": 1}")"), std::string::npos) << err;
  EXPECT_NE(err.find("payload_b64"), std::string::npos) << err;
  EXPECT_EQ(task(R"({"id":"a","delay_ms":1,"payload":"{\"n\": 1}"})").request.payload, R"({"n": 1})");
}

// ---------------------------------------------------------------- blank lines

TEST(BulkLine, BlankLines) {
  for (const std::string& line : {""s, " "s, "\t  \r"s, "\r"s}) {
    EXPECT_EQ(parse_bulk_line(line).kind, BulkLine::Kind::Blank) << "'" << line << "'";
  }
}

// ---------------------------------------------------------------- bad lines

TEST(BulkLine, NotJson) {
  EXPECT_NE(error_of("hello").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1)").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1} {})").find("invalid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a",})").find("invalid JSON"), std::string::npos);
  EXPECT_EQ(error_of("xyz").find("[json.exception"), std::string::npos) << "library tag leaked";
}

TEST(BulkLine, NotAnObject) {
  EXPECT_NE(error_of(R"(["a", 1])").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error_of("42").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error_of(R"("id")").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(error_of("null").find("must be a JSON object"), std::string::npos);
}

TEST(BulkLine, UnknownKey) {
  const auto err = error_of(R"({"id":"a","delay_ms":1,"delay":5})");
  EXPECT_NE(err.find("unknown key 'delay'"), std::string::npos) << err;
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"ID":"b"})").find("unknown key 'ID'"), std::string::npos);
}

TEST(BulkLine, DuplicateKey) {
  EXPECT_NE(error_of(R"({"id":"a","id":"b","delay_ms":1})").find("duplicate key 'id'"), std::string::npos);
  // Nested objects are rejected by type anyway; duplicates are only looked for at the top level.
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"payload":{"x":1,"x":2}})").find("payload must be a string"),
            std::string::npos);
}

TEST(BulkLine, MissingId) {
  EXPECT_NE(error_of(R"({"delay_ms":1})").find("missing key 'id'"), std::string::npos);
}

TEST(BulkLine, NeedsExactlyOneTime) {
  EXPECT_NE(error_of(R"({"id":"a"})").find("one of delay_ms or at_ms is required"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"at_ms":2})").find("mutually exclusive"), std::string::npos);
}

TEST(BulkLine, WrongTypes) {
  EXPECT_NE(error_of(R"({"id":7,"delay_ms":1})").find("id must be a string"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":null,"delay_ms":1})").find("id must be a string"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":"10"})").find("delay_ms must be an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":true})").find("delay_ms must be an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","at_ms":null})").find("at_ms must be an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"payload":5})").find("payload must be a string"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"payload":null})").find("payload must be a string"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"stream":["s"]})").find("stream must be a string"),
            std::string::npos);
}

TEST(BulkLine, TimesOutOfRange) {
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":-1})").find("delay_ms must be an integer between 0 and"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1.5})").find("got 1.5"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1e3})").find("delay_ms must be an integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","at_ms":0})").find("at_ms must be an integer between 1 and"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","at_ms":253402300800000})").find("at_ms"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":18446744073709551615})").find("got 18446744073709551615"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":99999999999999999999999})").find("delay_ms"), std::string::npos);
}

TEST(BulkLine, BadIds) {
  EXPECT_NE(error_of(R"({"id":"","delay_ms":1})").find("must not be empty"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":")" + std::string(kMaxIdBytes + 1, 'i') + R"(","delay_ms":1})")
                .find("longer than 256 bytes"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a\nb","delay_ms":1})").find("control character"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a\u0000","delay_ms":1})").find("control character"), std::string::npos);
  EXPECT_NE(error_of(R"({"id":"a\u007f","delay_ms":1})").find("control character"), std::string::npos);
  // A lone surrogate escape is not a character; JSON parsing rejects it.
  EXPECT_NE(error_of(R"({"id":"\ud800","delay_ms":1})").find("invalid JSON"), std::string::npos);
}

TEST(BulkLine, EmptyStreamIsAnError) {
  EXPECT_NE(error_of(R"({"id":"a","delay_ms":1,"stream":""})").find("stream must not be empty"), std::string::npos);
}

TEST(BulkLine, PayloadOverTheLimit) {
  const std::string payload(kMaxPayloadBytes + 1, 'p');
  const auto err = error_of(R"({"id":"a","delay_ms":1,"payload":")" + payload + "\"}");
  EXPECT_NE(err.find("65537 bytes"), std::string::npos) << err;
  EXPECT_NE(err.find("65536"), std::string::npos) << err;
}

TEST(BulkLine, RawInvalidUtf8IsRejected) {
  EXPECT_EQ(error_of("{\"id\":\"a\xFF\",\"delay_ms\":1}"), "not valid UTF-8 (byte 9)");
  EXPECT_NE(error_of("{\"id\":\"a\",\"delay_ms\":1,\"payload\":\"\xC3\"}").find("not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(error_of("{\"id\":\"\xC0\xAF\",\"delay_ms\":1}").find("not valid UTF-8"), std::string::npos);  // overlong
  EXPECT_NE(error_of("{\"id\":\"\xED\xA0\x80\",\"delay_ms\":1}").find("not valid UTF-8"), std::string::npos);
}

TEST(BulkLine, LineOverTheLimit) {
  const std::string line = R"({"id":"a","delay_ms":1,"payload":")" + std::string(kMaxBulkLineBytes, 'p') + "\"}";
  EXPECT_NE(error_of(line).find("line longer than 1048576 bytes"), std::string::npos);
}

TEST(BulkLine, ErrorsQuoteKeysPrintably) {
  const auto err = error_of(R"({"id":"a","delay_ms":1,"bad\nkey":1})");
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_NE(err.find("bad\\nkey"), std::string::npos) << err;
}

// ---------------------------------------------------------------- whole files

TEST(BulkValidation, AllGood) {
  const auto v = validate(R"({"id":"a","delay_ms":1})"
                          "\n"
                          R"({"id":"b","at_ms":2,"payload":"x"})"
                          "\n");
  EXPECT_TRUE(v.ok());
  EXPECT_EQ(v.tasks, 2u);
  EXPECT_EQ(v.invalid, 0u);
  EXPECT_TRUE(v.errors.empty());
}

TEST(BulkValidation, EmptyInput) {
  EXPECT_EQ(validate("").tasks, 0u);
  EXPECT_TRUE(validate("").ok());
  EXPECT_TRUE(validate("\n\n  \n").ok());
  EXPECT_EQ(validate("\n\n  \n").tasks, 0u);
}

TEST(BulkValidation, LastLineWithoutNewlineAndCrlf) {
  const auto v = validate("{\"id\":\"a\",\"delay_ms\":1}\r\n{\"id\":\"b\",\"delay_ms\":1}");
  EXPECT_TRUE(v.ok()) << (v.errors.empty() ? "" : v.errors[0]);
  EXPECT_EQ(v.tasks, 2u);
}

TEST(BulkValidation, LineNumbersCountBlankLines) {
  const auto v = validate("\n"                               // 1
                          "{\"id\":\"a\",\"delay_ms\":1}\n"  // 2
                          "   \n"                            // 3
                          "{\"id\":\"b\"}\n"                 // 4: no time
                          "{\"id\":\"c\",\"delay_ms\":1}\n"  // 5
                          "not json\n");                     // 6
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.tasks, 2u);
  EXPECT_EQ(v.invalid, 2u);
  ASSERT_EQ(v.errors.size(), 2u);
  EXPECT_EQ(v.errors[0], "line 4: one of delay_ms or at_ms is required");
  EXPECT_EQ(v.errors[1].rfind("line 6: invalid JSON", 0), 0u) << v.errors[1];
}

TEST(BulkValidation, InvalidBytesNameTheLine) {
  const auto v = validate("{\"id\":\"a\",\"delay_ms\":1}\n"
                          "{\"id\":\"\xFE\",\"delay_ms\":1}\n"
                          "{\"id\":\"\\u00fe\",\"delay_ms\":1}\n");
  ASSERT_EQ(v.errors.size(), 1u);
  EXPECT_EQ(v.errors[0], "line 2: not valid UTF-8 (byte 8)");
  EXPECT_EQ(v.tasks, 2u);
}

TEST(BulkValidation, InvalidBase64NamesTheLine) {
  const auto v = validate(R"({"id":"a","delay_ms":1,"payload_b64":"AAEC"})" "\n"
                          "\n"
                          R"({"id":"b","delay_ms":1,"payload_b64":"AAE"})" "\n");
  EXPECT_EQ(v.tasks, 1u);
  ASSERT_EQ(v.errors.size(), 1u);
  EXPECT_EQ(v.errors[0], "line 3: payload_b64 is not valid base64: length 3 is not a multiple of 4 (base64 needs its "
                         "'=' padding)");
}

TEST(BulkValidation, ListsOnlyTheFirstErrorsButCountsAll) {
  std::string text;
  for (int i = 1; i <= 50; ++i) text += (i % 2 == 0 ? "{\"id\":\"ok\",\"delay_ms\":1}\n" : "{}\n");
  const auto v = validate(text);
  EXPECT_EQ(v.tasks, 25u);
  EXPECT_EQ(v.invalid, 25u);
  ASSERT_EQ(v.errors.size(), kMaxBulkErrors);
  EXPECT_EQ(v.errors.front().rfind("line 1: ", 0), 0u);
  EXPECT_EQ(v.errors.back().rfind("line 39: ", 0), 0u);

  const auto three = validate(text, 3);
  EXPECT_EQ(three.errors.size(), 3u);
  EXPECT_EQ(three.invalid, 25u);
}

TEST(BulkValidation, OverlongLineIsSkippedAndTheNextLinesStillCount) {
  std::string text = "{\"id\":\"a\",\"delay_ms\":1}\n";
  text += std::string(3 * kMaxBulkLineBytes, 'x') + "\n";  // more than the reader keeps
  text += "{\"id\":\"b\",\"delay_ms\":1}\n";
  const auto v = validate(text);
  EXPECT_EQ(v.tasks, 2u);
  ASSERT_EQ(v.errors.size(), 1u);
  EXPECT_EQ(v.errors[0], "line 2: line longer than 1048576 bytes");
}

TEST(BulkValidation, LineExactlyAtTheLimitWithCrlf) {
  // Padded with spaces: a payload that long would break the payload limit instead.
  std::string line = R"({"id":"a","delay_ms":1})";
  line += std::string(kMaxBulkLineBytes - line.size(), ' ');
  ASSERT_EQ(line.size(), kMaxBulkLineBytes);
  auto v = validate(line + "\r\n" + line + "\n");
  EXPECT_TRUE(v.ok()) << (v.errors.empty() ? "" : v.errors[0]);
  EXPECT_EQ(v.tasks, 2u);
  v = validate(line + " \n");
  ASSERT_EQ(v.errors.size(), 1u);
  EXPECT_EQ(v.errors[0], "line 1: line longer than 1048576 bytes");
}

TEST(BulkReader, ReadsTasksInOrderWithLineNumbers) {
  std::istringstream in("\n{\"id\":\"a\",\"delay_ms\":1}\n\n{\"id\":\"b\",\"at_ms\":5}\n");
  BulkReader reader(in);
  auto first = reader.next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->request.id, "a");
  EXPECT_EQ(reader.line_number(), 2u);
  auto second = reader.next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->request.id, "b");
  EXPECT_EQ(second->request.mode, ScheduleMode::At);
  EXPECT_EQ(reader.line_number(), 4u);
  EXPECT_FALSE(reader.next().has_value());
  EXPECT_FALSE(reader.next().has_value());
}

TEST(BulkReader, LinesAcrossReadBlocksAndSkippedLines) {
  // Lines of varied lengths, so that many of them straddle the reader's block boundaries.
  std::string text;
  size_t count = 0;
  for (size_t i = 0; text.size() < 3 * BulkReader::kReadBlockBytes; ++i, ++count) {
    text += "{\"id\":\"t" + std::to_string(i) + "\",\"delay_ms\":1,\"payload\":\"" + std::string(i % 997, 'p') +
            "\"}" + (i % 3 == 0 ? "\r\n" : "\n");
    if (i % 50 == 0) text += "\n";  // a blank line
  }
  std::istringstream in(text);
  BulkReader reader(in);
  size_t seen = 0;
  while (auto line = reader.next()) {
    ASSERT_EQ(line->kind, BulkLine::Kind::Task) << line->error;
    ASSERT_EQ(line->request.id, "t" + std::to_string(seen));
    ASSERT_EQ(line->request.payload, std::string(seen % 997, 'p'));
    ++seen;
  }
  EXPECT_EQ(seen, count);
  EXPECT_TRUE(in.eof());

  std::istringstream again(text);
  BulkReader skipping(again);
  skipping.skip_lines(3);  // t0, the blank line after it, t1
  EXPECT_EQ(skipping.line_number(), 3u);
  auto next = skipping.next();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->request.id, "t2");
  EXPECT_EQ(skipping.line_number(), 4u);
  skipping.skip_lines(1u << 30);  // past the end
  EXPECT_FALSE(skipping.next().has_value());
}

TEST(BulkValidation, KeepsTheParsedTasksWithinTheBudget) {
  const std::string text = "{\"id\":\"a\",\"delay_ms\":1}\n\n{\"id\":\"b\",\"at_ms\":2,\"payload\":\"x\"}\n"
                           "{\"id\":\"c\",\"delay_ms\":3}\n";
  std::istringstream all_in(text);
  const auto all = validate_bulk_stream(all_in, kMaxBulkErrors, {}, 1 << 20);
  EXPECT_TRUE(all.kept_all);
  ASSERT_EQ(all.kept.size(), 3u);
  EXPECT_EQ(all.kept[1].line, 3u);
  EXPECT_EQ(all.kept[1].request.id, "b");
  EXPECT_EQ(all.kept[1].request.payload, "x");
  EXPECT_EQ(all.kept[2].line, 4u);

  std::istringstream some_in(text);
  const auto some = validate_bulk_stream(some_in, kMaxBulkErrors, {}, 2 * kept_bytes_of(all.kept[0]));
  EXPECT_FALSE(some.kept_all);
  EXPECT_EQ(some.tasks, 3u);
  ASSERT_EQ(some.kept.size(), 2u);  // a and b: all three would pass the budget
  EXPECT_EQ(some.kept[1].request.id, "b");

  std::istringstream none_in(text);
  const auto none = validate_bulk_stream(none_in);
  EXPECT_FALSE(none.kept_all);
  EXPECT_TRUE(none.kept.empty());

  std::istringstream bad_in(text + "{}\n");
  const auto bad = validate_bulk_stream(bad_in, kMaxBulkErrors, {}, 1 << 20);
  EXPECT_FALSE(bad.ok());
  EXPECT_FALSE(bad.kept_all);
  EXPECT_TRUE(bad.kept.empty());
}

TEST(BulkLine, NonAsciiBytesAfterLongAsciiRunsAreChecked) {
  // The ASCII fast path checks 8 bytes at a time: a bad byte at every offset of a word.
  for (size_t pad = 0; pad < 16; ++pad) {
    const std::string line = "{\"id\":\"a" + std::string(pad, 'x') + "\xFE\",\"delay_ms\":1}";
    EXPECT_EQ(error_of(line), "not valid UTF-8 (byte " + std::to_string(9 + pad) + ")") << pad;
    EXPECT_EQ(task("{\"id\":\"a" + std::string(pad, 'x') + "\xC3\xA9\",\"delay_ms\":1}").request.id,
              "a" + std::string(pad, 'x') + "\xC3\xA9");
  }
}

}  // namespace
}  // namespace expiry
