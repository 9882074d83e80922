// Unit tests of the log formats (src/log/logging.h): one log call is one physical line, with
// control characters and invalid UTF-8 in the message escaped, in both formats.
#include "log/logging.h"

#include <spdlog/formatter.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"

namespace expiry {
namespace {

// What one info-level call logging `message` writes in `format`.
std::string log_line(const std::string& format, const std::string& message) {
  std::ostringstream out;
  auto logger = std::make_shared<spdlog::logger>("t", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  logger->set_formatter(make_log_formatter("order-canceller", format));
  logger->info("entry {} not handled", message);
  return out.str();
}

// The message part of a text line: everything after "<program>: ", without the newline.
std::string text_message(const std::string& line) {
  static const std::regex kPrefix(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3} info order-canceller: )");
  std::smatch m;
  EXPECT_TRUE(std::regex_search(line, m, kPrefix)) << line;
  EXPECT_FALSE(line.empty());
  if (line.empty() || line.back() != '\n') return line;
  return line.substr(m.length(), line.size() - m.length() - 1);
}

size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n' ? 1 : 0;
  return n;
}

TEST(LogFormat, TextKeepsThePrefixAndPlainMessages) {
  const std::string line = log_line("text", "order:42 h\xC3\xA9llo \xE2\x82\xAC {\"a\": \"b\\\\\"}");
  EXPECT_EQ(count_lines(line), 1u);
  EXPECT_EQ(text_message(line), "entry order:42 h\xC3\xA9llo \xE2\x82\xAC {\"a\": \"b\\\\\"} not handled");
}

TEST(LogFormat, TextEscapesLineBreaksSoNoLineCanBeForged) {
  const std::string forged = "order:1\n2030-01-01T00:00:00.000 error order-canceller: FORGED\r\nagain\rcr";
  const std::string line = log_line("text", forged);
  EXPECT_EQ(count_lines(line), 1u) << line;
  EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  EXPECT_EQ(text_message(line),
            "entry order:1\\n2030-01-01T00:00:00.000 error order-canceller: FORGED\\r\\nagain\\rcr not handled");
}

TEST(LogFormat, TextEscapesControlsDelAndInvalidUtf8) {
  struct Case {
    std::string in;
    std::string out;
  };
  const Case cases[] = {
      {"a\tb", "a\\tb"},
      {std::string("nul\0x", 5), "nul\\x00x"},
      {"\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"},  // terminal escape sequences
      {"bell\x07", "bell\\x07"},
      {"del\x7f", "del\\x7f"},
      {"\xC2\x85nel", "\\xc2\\x85nel"},            // U+0085 NEXT LINE, a C1 control
      {"bad\xFF\xFE", "bad\\xff\\xfe"},            // invalid UTF-8 bytes
      {"\xC0\x8A", "\\xc0\\x8a"},                  // overlong encoding of '\n'
      {"\xED\xA0\x80", "\\xed\\xa0\\x80"},         // a UTF-16 surrogate
      {"cut\xE2\x82", "cut\\xe2\\x82"},            // truncated sequence
      {"\xF0\x9F\x98\x80 ok", "\xF0\x9F\x98\x80 ok"},  // valid 4-byte UTF-8 is kept
  };
  for (const auto& c : cases) {
    const std::string line = log_line("text", c.in);
    EXPECT_EQ(count_lines(line), 1u) << line;
    EXPECT_EQ(text_message(line), "entry " + c.out + " not handled") << escape_text(c.in);
  }
}

TEST(LogFormat, EveryByteValueStaysOnOneLine) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  for (const char* format : {"text", "json"}) {
    const std::string line = log_line(format, all + "\n" + all);
    EXPECT_EQ(count_lines(line), 1u) << format;
    EXPECT_EQ(line.back(), '\n') << format;
    EXPECT_EQ(line.find('\r'), std::string::npos) << format;
    EXPECT_EQ(first_invalid_utf8(line), std::string_view::npos) << format;
  }
}

TEST(LogFormat, JsonEscapesTheMessageAndDecodesToIt) {
  const std::string message = "order:1\n{\"level\":\"error\"}\r\t\x01";
  const std::string line = log_line("json", message);
  EXPECT_EQ(count_lines(line), 1u) << line;
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["msg"], "entry " + message + " not handled");
  EXPECT_EQ(j["level"], "info");
  EXPECT_EQ(j["program"], "order-canceller");
  EXPECT_TRUE(j["ts_ms"].is_number_integer());
}

TEST(LogFormat, UnknownFormatIsAConfigError) {
  EXPECT_THROW(make_log_formatter("p", "xml"), ConfigError);
  EXPECT_THROW(setup_logging("p", "text", "loud"), ConfigError);
}

}  // namespace
}  // namespace expiry
