// The API's bearer tokens: the tokens file (one `SCOPE TOKEN` per line; blank lines and `#`
// comments allowed), the three scopes and what each allows, and the constant-time lookup of a
// presented token. Pure but for reading the file.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace expiry {

// Ordered: each scope includes the ones below it (write reads, admin writes and reads).
enum class Scope { Read = 1, Write = 2, Admin = 3 };

std::optional<Scope> parse_scope(std::string_view text);
const char* scope_name(Scope scope);
// True when a token of scope `granted` may call a route that needs `needed`.
bool scope_allows(Scope granted, Scope needed);

// The shortest token the file accepts: a short token is guessable.
constexpr size_t kMinTokenLength = 16;

class TokenSet {
 public:
  // Parses the file's text. Throws ConfigError "<source> line N: ..." for a line that is not
  // `SCOPE TOKEN` (an unknown scope, a missing or extra field, a token shorter than
  // kMinTokenLength or with characters outside visible ASCII), a token listed twice, and a
  // file without any token.
  static TokenSet parse(const std::string& text, const std::string& source);
  // Reads and parses `path` (ConfigError when it cannot be read).
  static TokenSet load(const std::string& path);

  // The scope of `token`, or nullopt. Compares a SHA-256 of `token` with the stored digest of
  // every token (CRYPTO_memcmp, no early exit), so neither the length nor the position of a
  // match shows in the time taken.
  std::optional<Scope> find(std::string_view token) const;
  size_t size() const { return entries_.size(); }

 private:
  using Digest = std::array<unsigned char, 32>;
  static Digest digest_of(std::string_view token);
  struct Entry {
    Digest digest;
    Scope scope;
  };
  std::vector<Entry> entries_;
};

// The token of an `Authorization: Bearer TOKEN` header value, or nullopt for another scheme or
// a malformed value (the scheme name is case-insensitive, RFC 9110 section 11.1).
std::optional<std::string_view> bearer_token(std::string_view authorization);

}  // namespace expiry
