// A request's query string as decoded pairs. Pure.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace expiry {

// The query string's decoded pairs; nullopt for a malformed escape. '+' stays '+' (RFC 3986; not
// form encoding), so a cursor, which is base64, may be passed as given.
std::optional<std::multimap<std::string, std::string>> query_pairs(const std::string& query);

}  // namespace expiry
