// See drain_timeout.h.
#include "webhook/drain_timeout.h"

#include "base/duration_text.h"
#include "base/errors.h"

namespace expiry {

OptionSpec drain_timeout_option_spec() {
  return {kDrainTimeoutOption, OptionKind::String,
          "on SIGTERM/SIGINT: stop reading and wait this long (with a unit: 500ms, 10s, 2m; 0: not at all) for "
          "the deliveries in flight; what is still out then stays pending in the group, reclaimed by another "
          "member or after a restart",
          "10s"};
}

std::optional<std::chrono::milliseconds> parse_drain_timeout(std::string_view text, std::string* error) {
  const auto fail = [error](const std::string& why) -> std::optional<std::chrono::milliseconds> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (text == "0") return std::chrono::milliseconds(0);
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos) {
    return fail("needs a unit (ms, s, m or h), e.g. 10s: a bare number is ambiguous");
  }
  const auto ms = parse_duration_ms(text);
  if (!ms) return fail("must be 0 or a duration with a unit (ms, s, m or h), e.g. 10s");
  if (*ms > kMaxDrainTimeout.count()) return fail("must be at most 1h");
  return std::chrono::milliseconds(*ms);
}

std::chrono::milliseconds drain_timeout_from(const Settings& s) {
  std::string error;
  const auto timeout = parse_drain_timeout(s.text(kDrainTimeoutOption), &error);
  if (!timeout) throw ConfigError(s.source(kDrainTimeoutOption) + ": drain_timeout " + error);
  return *timeout;
}

std::string drain_timeout_text(std::chrono::milliseconds timeout) {
  const long long ms = timeout.count();
  if (ms == 0) return "0";
  if (ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace expiry
