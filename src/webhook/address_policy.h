// Which destinations expiry-webhook may connect to (SSRF protection): an address that is
// loopback, private (RFC 1918, fc00::/7), link-local, unspecified, multicast, CGNAT
// (100.64.0.0/10) or otherwise not globally routable is refused unless an allow_private CIDR
// covers it. Checked on the address the connection really goes to (after DNS resolution), so a
// name that resolves differently later (DNS rebinding) cannot slip past. Pure.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sockaddr;

namespace expiry {

// An IPv4 or IPv6 address; IPv4 is kept as its IPv4-mapped IPv6 form (::ffff:a.b.c.d), so one
// comparison serves both.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};

  bool is_v4() const;  // ::ffff:0:0/96
  std::string text() const;
};

// Parses "1.2.3.4" or an IPv6 literal; nullopt otherwise.
std::optional<IpAddress> parse_ip(std::string_view text);
// The address of an AF_INET or AF_INET6 socket address; nullopt for other families.
std::optional<IpAddress> ip_of(const sockaddr* address);

// A network: "10.0.0.0/8", "fc00::/7", or a bare address (/32 or /128).
struct Cidr {
  IpAddress network;
  int prefix = 0;  // in bits of the 128-bit form (IPv4 /8 is 104 here)
  std::string text;

  bool contains(const IpAddress& a) const;
};

// Parses a CIDR; nullopt and `error` for a malformed one (host bits set count as malformed, so
// a typo like 10.0.0.1/8 is caught).
std::optional<Cidr> parse_cidr(std::string_view text, std::string* error = nullptr);

// Why `a` is not a public address ("loopback", "private", "link-local", "unspecified",
// "multicast", "cgnat", "reserved"), or nullopt when it is public.
std::optional<std::string> non_public_kind(const IpAddress& a);

// The destination policy: public addresses, and non-public ones inside an allowed network.
class AddressPolicy {
 public:
  explicit AddressPolicy(std::vector<Cidr> allow_private = {}) : allow_private_(std::move(allow_private)) {}
  // nullopt when `a` may be connected to, else the reason ("loopback address 127.0.0.1 ...").
  std::optional<std::string> refusal(const IpAddress& a) const;

 private:
  std::vector<Cidr> allow_private_;
};

}  // namespace expiry
