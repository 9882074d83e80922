// See console_views.h.
#include "api/console_views.h"

#include <algorithm>
#include <cmath>

#include "generated/console_files.h"

namespace expiry {

std::vector<std::pair<std::string, std::string>> timeline_bounds(long long now_ms, const TimelineRange& range) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(static_cast<size_t>(range.steps));
  for (int i = 0; i < range.steps; ++i) {
    out.emplace_back("(" + std::to_string(now_ms + i * range.step_ms), std::to_string(now_ms + (i + 1) * range.step_ms));
  }
  return out;
}

std::optional<long long> percentile(std::vector<long long> values, double p) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::min(values.size(), std::max<size_t>(rank, 1)) - 1];
}

std::optional<ConsoleFile> console_file(std::string_view name) {
  if (name == "index.html") return ConsoleFile{"text/html; charset=utf-8", kConsoleIndexHtml};
  if (name == "app.js") return ConsoleFile{"text/javascript; charset=utf-8", kConsoleAppJs};
  if (name == "app.css") return ConsoleFile{"text/css; charset=utf-8", kConsoleAppCss};
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> console_headers() {
  return {{"Content-Security-Policy",
           "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
           "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"}};
}

}  // namespace expiry
