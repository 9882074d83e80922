// HTTP/1.x request head parsing; see http_request.h for the contract (RFC 9112 sections 2-5).
#include "service/http_request.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace expiry {

namespace {

constexpr size_t kMaxContentLengthDigits = 18;  // below 10^18: fits a long long

bool is_crlf(char c) { return c == '\r' || c == '\n'; }

// RFC 9110 5.6.2 tchar: the characters of a method or a header name.
bool is_token_char(unsigned char c) {
  if (std::isalnum(c)) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return is_token_char(static_cast<unsigned char>(c)); });
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

size_t skip_blank_lines(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && is_crlf(s[i])) ++i;
  return i;
}

// The head's lines without their line ends (a CR before LF is dropped, as is the final blank line).
std::vector<std::string_view> split_lines(std::string_view head) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < head.size()) {
    size_t end = head.find('\n', start);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The path of a request target (RFC 9112 3.2), or nullopt if the target has no recognised form.
std::optional<std::string> target_path(std::string_view target) {
  if (target == "*") return std::string("*");
  if (target.front() != '/') {
    // absolute-form: scheme "://" authority [path]; the authority is skipped, not checked.
    const size_t scheme_end = target.find("://");
    if (scheme_end == std::string_view::npos ||
        !(iequals(target.substr(0, scheme_end), "http") || iequals(target.substr(0, scheme_end), "https"))) {
      return std::nullopt;
    }
    const size_t path_start = target.find('/', scheme_end + 3);
    if (path_start == std::string_view::npos) return std::string("/");
    target.remove_prefix(path_start);
  }
  return std::string(target.substr(0, target.find_first_of("?#")));
}

std::optional<long long> parse_content_length(std::string_view value) {
  if (value.empty() || value.size() > kMaxContentLengthDigits) return std::nullopt;
  long long n = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::optional<HttpRequestHead> parse_lines(const std::vector<std::string_view>& lines);

}  // namespace

size_t find_http_head_end(std::string_view received, size_t scanned) {
  const size_t start = skip_blank_lines(received);
  // An end seen in part before (the "\r\n\r" of "\r\n\r\n") starts at most 2 bytes back.
  size_t from = std::max(start, scanned >= 2 ? scanned - 2 : 0);
  for (size_t lf = received.find('\n', from); lf != std::string_view::npos; lf = received.find('\n', lf + 1)) {
    if (lf + 1 < received.size() && received[lf + 1] == '\n') return lf + 2;
    if (lf + 2 < received.size() && received[lf + 1] == '\r' && received[lf + 2] == '\n') return lf + 3;
  }
  return 0;
}

std::optional<HttpRequestHead> parse_http_request_head(std::string_view head) {
  const std::vector<std::string_view> lines = split_lines(head.substr(skip_blank_lines(head)));
  if (lines.empty()) return std::nullopt;
  return parse_lines(lines);
}

std::variant<HttpRequestHead, HttpHeadError> check_http_request_head(std::string_view head) {
  const auto refuse = [](std::string reason, int status = 400) { return HttpHeadError{status, std::move(reason)}; };
  head.remove_prefix(skip_blank_lines(head));
  for (size_t i = 0; i < head.size(); ++i) {
    const auto c = static_cast<unsigned char>(head[i]);
    if (c == '\r' && (i + 1 == head.size() || head[i + 1] != '\n')) return refuse("a bare CR in the request head");
    if ((c < ' ' && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) {
      return refuse("a control character in the request head");
    }
  }
  const std::vector<std::string_view> lines = split_lines(head);
  if (lines.empty()) return refuse("no request line");
  if (lines[0].find('\t') != std::string_view::npos) return refuse("a tab in the request line");
  auto parsed = parse_lines(lines);
  if (!parsed) return refuse("a malformed request line, header line or Content-Length");
  const bool http11 = lines[0].size() >= 8 && lines[0].substr(lines[0].size() - 8) == "HTTP/1.1";
  int hosts = 0;
  bool have_length = false;
  std::optional<std::string_view> coding;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    const std::string_view name = lines[i].substr(0, colon);
    const std::string_view value = trim_ows(lines[i].substr(colon + 1));
    if (iequals(name, "host")) ++hosts;
    if (iequals(name, "content-length")) have_length = true;
    if (iequals(name, "transfer-encoding")) {
      if (coding) return refuse("two Transfer-Encoding header lines");
      coding = value;
    }
  }
  if (hosts > 1) return refuse("two Host header lines");
  if (http11 && hosts == 0) return refuse("an HTTP/1.1 request without Host");
  if (coding) {
    if (!iequals(*coding, "chunked")) return refuse("the transfer coding '" + std::string(*coding) + "' is not supported", 501);
    if (have_length) return refuse("both Transfer-Encoding and Content-Length");
    if (!http11) return refuse("Transfer-Encoding in an HTTP/1.0 request");
    parsed->chunked = true;
  }
  return std::move(*parsed);
}

namespace {

// The request line and header lines of a head (at least the request line): nullopt if malformed
// as parse_http_request_head says.
std::optional<HttpRequestHead> parse_lines(const std::vector<std::string_view>& lines) {
  // Request line: exactly three parts, each separated by one space.
  const std::string_view request_line = lines[0];
  const size_t first_space = request_line.find(' ');
  if (first_space == std::string_view::npos) return std::nullopt;
  const size_t second_space = request_line.find(' ', first_space + 1);
  if (second_space == std::string_view::npos) return std::nullopt;
  const std::string_view method = request_line.substr(0, first_space);
  const std::string_view target = request_line.substr(first_space + 1, second_space - first_space - 1);
  const std::string_view version = request_line.substr(second_space + 1);
  if (!is_token(method) || target.empty() || (version != "HTTP/1.1" && version != "HTTP/1.0")) return std::nullopt;
  if (std::any_of(target.begin(), target.end(), [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; })) {
    return std::nullopt;
  }
  std::optional<std::string> path = target_path(target);
  if (!path) return std::nullopt;

  HttpRequestHead parsed;
  parsed.method = std::string(method);
  parsed.path = std::move(*path);
  bool have_length = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty() || line.front() == ' ' || line.front() == '\t') return std::nullopt;  // obs-fold
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) return std::nullopt;
    if (!iequals(line.substr(0, colon), "content-length")) continue;
    const std::optional<long long> length = parse_content_length(trim_ows(line.substr(colon + 1)));
    if (!length || (have_length && *length != parsed.content_length)) return std::nullopt;
    parsed.content_length = *length;
    have_length = true;
  }
  return parsed;
}

}  // namespace

}  // namespace expiry
