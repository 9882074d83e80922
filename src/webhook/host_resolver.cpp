// See host_resolver.h.
#include "webhook/host_resolver.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>

namespace expiry {

std::vector<IpAddress> resolve_host(const std::string& host, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &list);
  std::vector<IpAddress> out;
  if (rc != 0) {
    error = gai_strerror(rc);
    return out;
  }
  for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    const auto ip = ip_of(ai->ai_addr);
    if (ip && std::none_of(out.begin(), out.end(), [&](const IpAddress& a) { return a.bytes == ip->bytes; })) {
      out.push_back(*ip);
    }
  }
  freeaddrinfo(list);
  return out;
}

}  // namespace expiry
