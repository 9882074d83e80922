// See tokens.h.
#include "api/tokens.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

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

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' || c == '@' || c == '-';
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Applies option `field` (name=, prefix=, namespace=) of a tokens-file line to `grant`.
void apply_token_option(std::string_view field, TokenGrant& grant, const std::string& where) {
  const size_t eq = field.find('=');
  const std::string_view key = field.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? std::string_view() : field.substr(eq + 1);
  if (eq == std::string_view::npos || (key != "name" && key != "prefix" && key != "namespace")) {
    throw ConfigError(where + "unknown option '" + std::string(key) +
                      "' (expected name=NAME, prefix=PREFIX or namespace=NS after `SCOPE TOKEN`)");
  }
  if (key == "name") {
    if (grant.named) throw ConfigError(where + "name= given twice");
    if (value.empty() || value.size() > kMaxTokenNameLength || !std::all_of(value.begin(), value.end(), name_char)) {
      throw ConfigError(where + "a token name is 1 to " + std::to_string(kMaxTokenNameLength) +
                        " characters of A-Z a-z 0-9 . _ : @ -");
    }
    grant.name = std::string(value);
    grant.named = true;
  } else if (key == "prefix") {
    if (value.empty()) throw ConfigError(where + "prefix= needs a task-id prefix");
    grant.prefixes.emplace_back(value);
  } else {
    if (!grant.ns.empty()) throw ConfigError(where + "namespace= given twice");
    if (value.empty()) throw ConfigError(where + "namespace= needs a namespace");
    grant.ns = std::string(value);
  }
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

bool TokenGrant::allows_id(std::string_view id) const {
  if (prefixes.empty()) return true;
  return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) { return starts_with(id, p); });
}

bool TokenGrant::covers_prefix(std::string_view prefix) const { return allows_id(prefix); }

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
    if (fields.size() < 2) {
      throw ConfigError(where + "expected `SCOPE TOKEN [name=NAME] [prefix=PREFIX]... [namespace=NS]` (scope read, "
                        "write or admin), found 1 field");
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
    TokenGrant grant;
    grant.scope = *scope;
    for (size_t i = 2; i < fields.size(); ++i) apply_token_option(fields[i], grant, where);
    if (!grant.named) grant.name = "line-" + std::to_string(line_no);
    set.entries_.push_back({digest, std::move(grant)});
    if (end == text.size()) break;
  }
  if (set.entries_.empty()) throw ConfigError(source + ": no tokens (lines `SCOPE TOKEN`)");
  return set;
}

TokenSet TokenSet::load(const std::string& path) {
  return parse(read_text_file(path, "tokens file"), "tokens file " + path);
}

const TokenGrant* TokenSet::find(std::string_view token) const {
  const Digest digest = digest_of(token);
  size_t found = 0;  // 1 + the matching entry's index; every entry is compared, whatever matched before
  for (size_t i = 0; i < entries_.size(); ++i) {
    const size_t same = CRYPTO_memcmp(entries_[i].digest.data(), digest.data(), digest.size()) == 0;
    found |= same * (i + 1);  // digests are unique: at most one entry matches
  }
  if (found == 0) return nullptr;
  return &entries_[found - 1].grant;
}

size_t TokenSet::count_for_other_namespaces(const std::string& ns) const {
  return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return !e.grant.ns.empty() && e.grant.ns != ns;
  }));
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

std::optional<std::string> tokens_file_mode_warning(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & S_IROTH) == 0) return std::nullopt;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return "the tokens file " + path + " may be read by every user of this machine (mode " + mode +
         "): anyone here can take its tokens; chmod 600 it";
}

}  // namespace expiry
