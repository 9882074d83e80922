// The text INFO answers: "# Section" headers and "field:value" lines ending in CRLF.
#pragma once

#include <string>
#include <string_view>

namespace expiry {

// The value of `field` in INFO's text ("" when it is not there).
std::string info_field(std::string_view info, std::string_view field);

}  // namespace expiry
