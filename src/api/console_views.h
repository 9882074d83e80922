// The pure parts of the web console's API (docs/api.md, "Web console"): the console's files with
// the headers they are served with (a strict Content-Security-Policy: no inline script, nothing
// from another origin). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace expiry {

// A file of the console, built into the program (src/api/console/).
struct ConsoleFile {
  const char* content_type;
  std::string_view body;
};
// The file named `name` ("index.html", "app.js", "app.css"); nullopt for any other name.
std::optional<ConsoleFile> console_file(std::string_view name);

// The headers every console file is served with: Content-Security-Policy (scripts, styles and
// fetches from this origin only, frame-ancestors 'none'), X-Frame-Options, Referrer-Policy.
std::vector<std::pair<std::string, std::string>> console_headers();
// The Content-Security-Policy of every other answer (JSON and text: nothing to load or frame).
inline constexpr const char* kApiContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'";

}  // namespace expiry
