// Text and JSON-lines log formats for spdlog. Both escape the message, so one call is one line
// whatever a message contains: the text format with escape_text, the JSON format with
// nlohmann::json (every line is valid JSON).
#include "log/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_escape.h"

namespace expiry {
namespace {

// The message as escape_text renders it: the %* flag of the text pattern (in place of %v, which
// copies the message raw).
class EscapedMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string text = escape_text(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(text.data(), text.data() + text.size());
  }

  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<EscapedMessageFlag>(); }
};

class JsonFormatter final : public spdlog::formatter {
 public:
  explicit JsonFormatter(std::string program) : program_(std::move(program)) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(msg.time.time_since_epoch()).count();
    nlohmann::json line = {
        {"ts_ms", ms},
        {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                              spdlog::level::to_string_view(msg.level).size())},
        {"program", program_},
        {"msg", std::string(msg.payload.data(), msg.payload.size())},
    };
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    dest.append(text.data(), text.data() + text.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(program_); }

 private:
  std::string program_;
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_log_formatter(const std::string& program, const std::string& format) {
  if (format == "json") return std::make_unique<JsonFormatter>(program);
  if (format != "text") throw ConfigError("log format must be text or json, got '" + format + "'");
  auto text = std::make_unique<spdlog::pattern_formatter>();
  text->add_flag<EscapedMessageFlag>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ " + program + ": %*");
  return text;
}

void setup_logging(const std::string& program, const std::string& format, const std::string& level) {
  auto logger = std::make_shared<spdlog::logger>(program, std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(make_log_formatter(program, format));
  const auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") throw ConfigError("unknown log level '" + level + "'");
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace expiry
