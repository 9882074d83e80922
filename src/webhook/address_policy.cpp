// See address_policy.h.
#include "webhook/address_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace expiry {

namespace {

IpAddress from_v4(const uint8_t* four) {
  IpAddress a;
  a.bytes[10] = 0xff;
  a.bytes[11] = 0xff;
  std::memcpy(a.bytes.data() + 12, four, 4);
  return a;
}

// `a` inside network `net`/`prefix` (128-bit form).
bool in_network(const IpAddress& a, const std::array<uint8_t, 16>& net, int prefix) {
  for (int bit = 0; bit < prefix; ++bit) {
    const int byte = bit / 8;
    const uint8_t mask = static_cast<uint8_t>(0x80 >> (bit % 8));
    if ((a.bytes[byte] & mask) != (net[byte] & mask)) return false;
  }
  return true;
}

bool in_v4(const IpAddress& a, uint8_t b0, uint8_t b1, int prefix_v4) {
  const uint8_t four[4] = {b0, b1, 0, 0};
  return in_network(a, from_v4(four).bytes, 96 + prefix_v4);
}

bool in_v6(const IpAddress& a, uint8_t b0, uint8_t b1, int prefix) {
  std::array<uint8_t, 16> net{};
  net[0] = b0;
  net[1] = b1;
  return in_network(a, net, prefix);
}

}  // namespace

bool IpAddress::is_v4() const {
  for (int i = 0; i < 10; ++i) {
    if (bytes[i] != 0) return false;
  }
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

std::string IpAddress::text() const {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (is_v4()) {
    inet_ntop(AF_INET, bytes.data() + 12, buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
  }
  return buf;
}

std::optional<IpAddress> parse_ip(std::string_view text) {
  const std::string s(text);
  uint8_t buf[16];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) return from_v4(buf);
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    IpAddress a;
    std::memcpy(a.bytes.data(), buf, 16);
    return a;
  }
  return std::nullopt;
}

std::optional<IpAddress> ip_of(const sockaddr* address) {
  if (address == nullptr) return std::nullopt;
  if (address->sa_family == AF_INET) {
    sockaddr_in in;
    std::memcpy(&in, address, sizeof in);
    return from_v4(reinterpret_cast<const uint8_t*>(&in.sin_addr));
  }
  if (address->sa_family == AF_INET6) {
    sockaddr_in6 in6;
    std::memcpy(&in6, address, sizeof in6);
    IpAddress a;
    std::memcpy(a.bytes.data(), &in6.sin6_addr, 16);
    return a;
  }
  return std::nullopt;
}

bool Cidr::contains(const IpAddress& a) const { return in_network(a, network.bytes, prefix); }

std::optional<Cidr> parse_cidr(std::string_view text, std::string* error) {
  const auto fail = [&](const std::string& why) -> std::optional<Cidr> {
    if (error) *error = "\"" + std::string(text) + "\" is not a CIDR (" + why + ")";
    return std::nullopt;
  };
  const size_t slash = text.find('/');
  const auto ip = parse_ip(text.substr(0, slash));
  if (!ip) return fail("not an IPv4 or IPv6 address");
  const int width = ip->is_v4() && text.substr(0, slash).find(':') == std::string_view::npos ? 32 : 128;
  int bits = width;
  if (slash != std::string_view::npos) {
    const std::string_view n = text.substr(slash + 1);
    if (n.empty() || n.size() > 3) return fail("bad prefix length");
    bits = 0;
    for (char c : n) {
      if (c < '0' || c > '9') return fail("bad prefix length");
      bits = bits * 10 + (c - '0');
    }
    if (bits > width) return fail("prefix longer than " + std::to_string(width) + " bits");
  }
  Cidr cidr;
  cidr.network = *ip;
  cidr.prefix = bits + (width == 32 ? 96 : 0);
  cidr.text = std::string(text);
  for (int bit = cidr.prefix; bit < 128; ++bit) {
    if (ip->bytes[bit / 8] & (0x80 >> (bit % 8))) return fail("address bits set beyond the prefix");
  }
  return cidr;
}

std::optional<std::string> non_public_kind(const IpAddress& a) {
  if (a.is_v4()) {
    if (in_v4(a, 0, 0, 8)) return std::string(a.bytes[12] == 0 && a.bytes[13] == 0 && a.bytes[14] == 0 &&
                                                      a.bytes[15] == 0
                                                  ? "unspecified"
                                                  : "reserved");
    if (in_v4(a, 127, 0, 8)) return std::string("loopback");
    if (in_v4(a, 10, 0, 8) || in_v4(a, 172, 16, 12) || in_v4(a, 192, 168, 16)) return std::string("private");
    if (in_v4(a, 169, 254, 16)) return std::string("link-local");
    if (in_v4(a, 100, 64, 10)) return std::string("cgnat");
    if (in_v4(a, 224, 0, 4)) return std::string("multicast");
    if (in_v4(a, 240, 0, 4)) return std::string("reserved");  // and 255.255.255.255
    return std::nullopt;
  }
  std::array<uint8_t, 16> zero{};
  if (a.bytes == zero) return std::string("unspecified");
  std::array<uint8_t, 16> one{};
  one[15] = 1;
  if (a.bytes == one) return std::string("loopback");
  if (in_v6(a, 0xfc, 0, 7)) return std::string("private");
  if (in_v6(a, 0xfe, 0x80, 10)) return std::string("link-local");
  if (in_v6(a, 0xff, 0, 8)) return std::string("multicast");
  // IPv4-compatible and other ::/96 forms, NAT64 (64:ff9b::/96) and 6to4 embed IPv4 addresses
  // we would have to check in turn: refuse them rather than trust them.
  if (in_network(a, zero, 96)) return std::string("reserved");
  std::array<uint8_t, 16> nat64{};
  nat64[1] = 0x64;
  nat64[2] = 0xff;
  nat64[3] = 0x9b;
  if (in_network(a, nat64, 96)) return std::string("reserved");
  if (in_v6(a, 0x20, 0x02, 16)) return std::string("reserved");
  return std::nullopt;
}

std::optional<std::string> AddressPolicy::refusal(const IpAddress& a) const {
  const auto kind = non_public_kind(a);
  if (!kind) return std::nullopt;
  for (const auto& net : allow_private_) {
    if (net.contains(a)) return std::nullopt;
  }
  return *kind + " address " + a.text() + " is not in allow_private";
}

}  // namespace expiry
