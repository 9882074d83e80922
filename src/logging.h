// spdlog setup shared by the programs: text or JSON lines on stderr.
#pragma once

#include <string>

namespace expiry {

// format: "text" or "json"; level: an spdlog level name. Throws ConfigError on bad values.
void setup_logging(const std::string& program, const std::string& format, const std::string& level);

}  // namespace expiry
