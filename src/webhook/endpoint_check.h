// expiry-webhook --check-config's look at each endpoint: the addresses its host resolves to now,
// and the AddressPolicy's verdict on each, the check a delivery makes on every address it
// connects to (HttpClient::open_socket). An endpoint that does not resolve, or none of whose
// addresses the policy allows, can never be delivered to: each of its tasks would be
// dead-lettered. (DNS may answer differently at delivery time: deliveries check again.) Pure:
// the resolver is passed in (host_resolver.h's resolve_host in expiry-webhook).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "webhook/address_policy.h"
#include "webhook/webhook_config.h"

namespace expiry {

struct AddressVerdict {
  IpAddress address;
  std::optional<std::string> refusal;  // nullopt: allowed
};

struct EndpointVerdict {
  std::string name;
  std::string url;
  std::string host;
  std::string resolve_error;  // non-empty: the host did not resolve
  std::vector<AddressVerdict> addresses;

  // Resolves to at least one address the policy allows.
  bool deliverable() const;
  // Why not deliverable() ("does not resolve: ...", "every address is refused"); empty if it is.
  std::string why_not() const;
};

// The addresses of `host` (a name or an IP literal); empty and `error` when it does not resolve.
using ResolveHost = std::function<std::vector<IpAddress>(const std::string& host, std::string& error)>;

EndpointVerdict check_endpoint(const WebhookEndpoint& endpoint, const AddressPolicy& policy,
                               const ResolveHost& resolve);

// The verdict as lines: "endpoint NAME URL: deliverable|NEVER DELIVERABLE (why)", then one
// "  ADDRESS: allowed (public|KIND, in allow_private)" or "  ADDRESS: refused: REASON" per address.
std::string describe_verdict(const EndpointVerdict& verdict);

}  // namespace expiry
