// See endpoint_check.h.
#include "webhook/endpoint_check.h"

#include <algorithm>

namespace expiry {

bool EndpointVerdict::deliverable() const {
  return resolve_error.empty() &&
         std::any_of(addresses.begin(), addresses.end(), [](const AddressVerdict& a) { return !a.refusal; });
}

std::string EndpointVerdict::why_not() const {
  if (!resolve_error.empty()) return "its host " + host + " does not resolve: " + resolve_error;
  if (addresses.empty()) return "its host " + host + " resolves to no address";
  if (!deliverable()) return "the address policy refuses every address of its host " + host;
  return "";
}

EndpointVerdict check_endpoint(const WebhookEndpoint& endpoint, const AddressPolicy& policy,
                               const ResolveHost& resolve) {
  EndpointVerdict v;
  v.name = endpoint.name;
  v.url = endpoint.url;
  v.host = webhook_url_host(endpoint.url).value_or("");
  if (v.host.empty()) {
    v.resolve_error = "the URL has no host";
    return v;
  }
  std::string error;
  for (const IpAddress& a : resolve(v.host, error)) v.addresses.push_back({a, policy.refusal(a)});
  if (v.addresses.empty()) v.resolve_error = error.empty() ? "no address" : error;
  return v;
}

std::string describe_verdict(const EndpointVerdict& v) {
  std::string out = "endpoint " + v.name + " " + v.url + ": " +
                    (v.deliverable() ? std::string("deliverable") : "NEVER DELIVERABLE (" + v.why_not() + ")") + "\n";
  for (const AddressVerdict& a : v.addresses) {
    out += "  " + a.address.text() + ": ";
    if (a.refusal) {
      out += "refused: " + *a.refusal;
    } else if (auto kind = non_public_kind(a.address)) {
      out += "allowed (" + *kind + ", in allow_private)";
    } else {
      out += "allowed (public)";
    }
    out += "\n";
  }
  return out;
}

}  // namespace expiry
