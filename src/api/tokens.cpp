// See tokens.h.
#include "api/tokens.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

#include "base/errors.h"
#include "config/text_file.h"

namespace expiry {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// The whitespace-separated fields of `line`.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool visible_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

}  // namespace

std::optional<Scope> parse_scope(std::string_view text) {
  if (text == "read") return Scope::Read;
  if (text == "write") return Scope::Write;
  if (text == "admin") return Scope::Admin;
  return std::nullopt;
}

const char* scope_name(Scope scope) {
  switch (scope) {
    case Scope::Read:
      return "read";
    case Scope::Write:
      return "write";
    case Scope::Admin:
      return "admin";
  }
  return "?";
}

bool scope_allows(Scope granted, Scope needed) { return static_cast<int>(granted) >= static_cast<int>(needed); }

TokenSet::Digest TokenSet::digest_of(std::string_view token) {
  Digest d{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
  return d;
}

TokenSet TokenSet::parse(const std::string& text, const std::string& source) {
  TokenSet set;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto fields = fields_of(line);
    const std::string where = source + " line " + std::to_string(line_no) + ": ";
    if (fields.empty() || fields[0].front() == '#') {
      if (end == text.size()) break;
      continue;
    }
    if (fields.size() != 2) {
      throw ConfigError(where + "expected `SCOPE TOKEN` (scope read, write or admin), found " +
                        std::to_string(fields.size()) + " field" + (fields.size() == 1 ? "" : "s"));
    }
    const auto scope = parse_scope(fields[0]);
    if (!scope) throw ConfigError(where + "unknown scope (expected read, write or admin)");
    if (fields[1].size() < kMinTokenLength) {
      throw ConfigError(where + "token shorter than " + std::to_string(kMinTokenLength) + " characters");
    }
    if (!visible_ascii(fields[1])) throw ConfigError(where + "token holds characters other than visible ASCII");
    const Digest digest = digest_of(fields[1]);
    for (const Entry& e : set.entries_) {
      if (e.digest == digest) throw ConfigError(where + "token listed twice");
    }
    set.entries_.push_back({digest, *scope});
    if (end == text.size()) break;
  }
  if (set.entries_.empty()) throw ConfigError(source + ": no tokens (lines `SCOPE TOKEN`)");
  return set;
}

TokenSet TokenSet::load(const std::string& path) {
  return parse(read_text_file(path, "tokens file"), "tokens file " + path);
}

std::optional<Scope> TokenSet::find(std::string_view token) const {
  const Digest digest = digest_of(token);
  int found = 0;  // the scope's value; every entry is compared, whatever matched before
  for (const Entry& e : entries_) {
    const int same = CRYPTO_memcmp(e.digest.data(), digest.data(), digest.size()) == 0;
    found |= same * static_cast<int>(e.scope);
  }
  if (found == 0) return std::nullopt;
  return static_cast<Scope>(found);
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() + 1) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view rest = authorization.substr(kScheme.size());
  if (!is_space(rest.front())) return std::nullopt;
  while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && is_space(rest.back())) rest.remove_suffix(1);
  if (rest.empty() || !visible_ascii(rest)) return std::nullopt;
  return rest;
}

}  // namespace expiry
