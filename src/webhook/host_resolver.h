// The system resolver as endpoint_check.h's ResolveHost: what --check-config shows an endpoint's
// host resolves to, the way libcurl resolves it for a delivery (getaddrinfo, AF_UNSPEC, TCP).
#pragma once

#include <string>
#include <vector>

#include "webhook/address_policy.h"

namespace expiry {

// The addresses of `host` (a name or an IP literal), each once, in the resolver's order; empty
// and `error` (gai_strerror) when it does not resolve. Blocks: for the configuration stage only.
std::vector<IpAddress> resolve_host(const std::string& host, std::string& error);

}  // namespace expiry
