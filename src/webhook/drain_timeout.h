// --drain-timeout (EXPIRY_WEBHOOK_DRAIN_TIMEOUT): how long expiry-webhook's graceful stop waits
// for the deliveries it holds before it exits anyway (drain_deadline.h does the waiting). Pure.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "config/settings.h"

namespace expiry {

inline constexpr const char* kDrainTimeoutOption = "drain_timeout";
// The longest drain timeout accepted: longer is surely a typo (a stop that hangs for hours).
inline constexpr std::chrono::milliseconds kMaxDrainTimeout = std::chrono::hours(1);

// The option (a String, default "10s"), for webhook_option_specs.
OptionSpec drain_timeout_option_spec();

// "0" (exit at once, everything held left pending), or digits with a unit: ms, s, m or h
// (base/duration_text.h), at most kMaxDrainTimeout. A bare number other than 0 is refused, since
// "10" would silently mean 10 ms. nullopt and `error` for anything else.
std::optional<std::chrono::milliseconds> parse_drain_timeout(std::string_view text, std::string* error = nullptr);

// Reads the option; throws ConfigError naming its source for a value parse_drain_timeout refuses.
std::chrono::milliseconds drain_timeout_from(const Settings& s);

// "10s", "1500ms", "0": the canonical text of a drain timeout, as logs show it.
std::string drain_timeout_text(std::chrono::milliseconds timeout);

}  // namespace expiry
