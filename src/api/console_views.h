// The pure parts of the web console's API (docs/api.md, "Web console"): the due-time ranges of
// GET /v1/timeline, the lateness percentiles of GET /v1/overview, and the console's files with
// the headers they are served with (a strict Content-Security-Policy: no inline script, nothing
// from another origin). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace expiry {

// One histogram of GET /v1/timeline: `steps` bars of `step_ms` each, from now on.
struct TimelineRange {
  const char* name;  // "minute", "hour", "day"
  long long step_ms;
  int steps;
};
inline constexpr TimelineRange kTimelineRanges[] = {
    {"minute", 5'000, 12},      // 5 s bars over the next minute
    {"hour", 300'000, 12},      // 5 min bars over the next hour
    {"day", 3'600'000, 24},     // 1 h bars over the next day
};

// The ZCOUNT bounds of each bar of `range` from `now_ms`: bar i holds the tasks due in
// (now + i*step, now + (i+1)*step], as Redis score ranges ("(lo", "hi").
std::vector<std::pair<std::string, std::string>> timeline_bounds(long long now_ms, const TimelineRange& range);

// The nearest-rank percentile `p` (0 < p <= 100) of `values` (sorted here); nullopt when empty.
std::optional<long long> percentile(std::vector<long long> values, double p);

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
