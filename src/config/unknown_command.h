// The usage error for a mistyped command (`expiry-ctl shedule`, `expiry-ctl dead lst`): CLI11
// says "The following argument was not expected" or "A subcommand is required"; this names the
// word as an unknown command and suggests the closest one (base/did_you_mean.h).
#pragma once

#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace expiry {

// After app.parse failed: when the first argument left over, on the deepest command given, is a
// word (not an option) and that command has subcommands, "unknown command 'dead lst'" with
// "; did you mean 'dead list'?" when one is close. nullopt for any other failure.
std::optional<std::string> unknown_command_message(const CLI::App& app);

}  // namespace expiry
