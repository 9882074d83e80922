// The API's bearer tokens: the tokens file (one `SCOPE TOKEN [name=NAME] [prefix=P]...
// [namespace=NS]` per line; blank lines and `#` comments allowed), the three scopes and what each
// allows, a token's narrowing to task-id prefixes or one namespace, and the constant-time lookup
// of a presented token. Pure but for reading the file.
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
// The longest token name (name=): it goes into every audit record of the token's actions.
constexpr size_t kMaxTokenNameLength = 64;

// What a token found in the file grants.
struct TokenGrant {
  Scope scope = Scope::Read;
  // name= as written; without one, "line-N" after its line in the file, so that each token
  // still has a name to answer in /v1/whoami and to record in the audit trail.
  std::string name;
  bool named = false;  // name= was given
  // prefix=, in the file's order: when any, the token may address only task and schedule ids
  // that start with one of them (and call only the routes that name such ids).
  std::vector<std::string> prefixes;
  std::string ns;  // namespace=: when set, the token is valid only on an expiry-api serving it

  // Whether the token may address task or schedule id `id` (true without prefixes).
  bool allows_id(std::string_view id) const;
  // Whether every id that starts with `prefix` is one the token may address.
  bool covers_prefix(std::string_view prefix) const;
  bool narrowed_by_prefix() const { return !prefixes.empty(); }
};

class TokenSet {
 public:
  // Parses the file's text. Throws ConfigError "<source> line N: ..." for a line that is not
  // `SCOPE TOKEN [OPTION]...` (an unknown scope, a missing field, a token shorter than
  // kMinTokenLength or with characters outside visible ASCII, an option other than name=,
  // prefix= and namespace=, a name given twice or not of [A-Za-z0-9._:@-]{1,64}, an empty
  // prefix, a namespace given twice or empty), a token listed twice, and a file without any
  // token.
  static TokenSet parse(const std::string& text, const std::string& source);
  // Reads and parses `path` (ConfigError when it cannot be read).
  static TokenSet load(const std::string& path);

  // What `token` grants, or nullptr. Compares a SHA-256 of `token` with the stored digest of
  // every token (CRYPTO_memcmp, no early exit), so neither the length nor the position of a
  // match shows in the time taken.
  const TokenGrant* find(std::string_view token) const;
  size_t size() const { return entries_.size(); }
  // How many tokens are narrowed to a namespace other than `ns` (not valid where `ns` is served).
  size_t count_for_other_namespaces(const std::string& ns) const;

 private:
  using Digest = std::array<unsigned char, 32>;
  static Digest digest_of(std::string_view token);
  struct Entry {
    Digest digest;
    TokenGrant grant;
  };
  std::vector<Entry> entries_;
};

// The token of an `Authorization: Bearer TOKEN` header value, or nullopt for another scheme or
// a malformed value (the scheme name is case-insensitive, RFC 9110 section 11.1).
std::optional<std::string_view> bearer_token(std::string_view authorization);

// A warning for a tokens file that every user of the machine may read (mode o+r), naming the
// mode and the fix; nullopt when it is not, or cannot be checked.
std::optional<std::string> tokens_file_mode_warning(const std::string& path);

}  // namespace expiry
