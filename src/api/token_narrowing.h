// What a token narrowed by prefix= or namespace= (tokens.h) may not do: the routes it may call
// and the ids they address. Pure.
#pragma once

#include <optional>
#include <string>

#include "api/routes.h"
#include "api/tokens.h"

namespace expiry {

// Why `grant` may not call `match` on an expiry-api serving namespace `ns`, with query string
// `query` (as sent); nullopt: it may. A token narrowed to task-id prefixes may call only
// /v1/whoami, the offline rule preview, routes that name one task or schedule id within its
// prefixes, and GET /v1/tasks with a ?prefix= within them. Routes whose body names ids (a
// batch, a bulk action) check each id themselves.
std::optional<std::string> narrowing_refusal(const TokenGrant& grant, const RouteMatch& match, const std::string& ns,
                                             const std::string& query);

// The sentence a refusal of id `id` (or prefix) to `grant` ends with, naming its prefixes.
std::string outside_prefixes_detail(const TokenGrant& grant, const std::string& what);

}  // namespace expiry
