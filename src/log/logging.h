// spdlog setup shared by the programs: text or JSON lines on stderr. One log call is always
// exactly one line, whatever the message holds (ids and payloads come from outside).
#pragma once

#include <memory>
#include <string>

namespace spdlog {
class formatter;
}

namespace expiry {

// format: "text" or "json"; level: an spdlog level name. Throws ConfigError on bad values.
void setup_logging(const std::string& program, const std::string& format, const std::string& level);

// The formatter setup_logging installs for `format` ("text" or "json"; throws ConfigError
// otherwise).
// - text: "<local time with ms> <level> <program>: <message>", the message rendered with
//   escape_text (text_escape.h): \n \r \t, other C0/C1 controls, DEL and invalid UTF-8 bytes
//   become \n, \r, \t or \xNN, so a message cannot forge a second line.
// - json: one object {ts_ms, level, program, msg} per line; nlohmann::json escapes the message
//   and replaces invalid UTF-8 with U+FFFD.
std::unique_ptr<spdlog::formatter> make_log_formatter(const std::string& program, const std::string& format);

}  // namespace expiry
