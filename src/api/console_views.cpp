// See console_views.h.
#include "api/console_views.h"

#include "generated/console_files.h"

namespace expiry {

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
