// The --help of every program in words. An option's value shows as a placeholder that says what
// to give (MS, FILE, ZONE, N) instead of CLI11's type names (TEXT, INT), and its range, default
// exclusions and environment variable close its description ("[1 to 3600000; default: 1000;
// not with --file]") instead of CLI11's "INT:INT in [1 - 3600000]=1000 Excludes: --file" after
// its name.
#pragma once

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace expiry {

// The placeholder of an option's value (`option_name` as "--wait-timeout-ms"):
// - the type name the program gave it (->type_name("ZONE"), without a ':', which starts a
//   validator's text);
// - else what its name says: --x-ms MS, --x-s SECONDS, --x-bytes BYTES, --x-file and --config
//   FILE, --x-dir DIR, --x-url URL, --x-port PORT, --tz ZONE, --listen HOST:PORT, --sentinel
//   HOST:PORT,..., --x-bind ADDRESS, --webhook ENDPOINT;
// - else N for an integer, and the last word of the name in capitals for the rest (--namespace
//   NAMESPACE).
// `type_name` is CLI11's (Option::get_type_name(): "TEXT", "INT", then a validator's text after
// a ':').
std::string value_placeholder(std::string_view option_name, std::string_view type_name);

// "0 to 1000" from the type name CLI11 gives an option with a Range validator
// ("INT:INT in [0 - 1000]"); "" for any other.
std::string range_in_words(std::string_view type_name);

// Gives `app` and every subcommand it has the readable layout above. Call once every option
// and subcommand is added (parse_command_line of config/settings.h does).
void use_readable_help(CLI::App& app);

}  // namespace expiry
