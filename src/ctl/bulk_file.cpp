// Bulk schedule file parsing; see bulk_file.h.
#include "ctl/bulk_file.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/text_escape.h"
#include "functions/key_layout.h"

namespace expiry {
namespace {

using nlohmann::json;

// Whether every byte is below 0x80 (ASCII is valid UTF-8: no sequence walk needed).
bool is_ascii(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    if ((word & 0x8080808080808080ULL) != 0) return false;
  }
  for (; n > 0; ++p, --n) {
    if ((static_cast<unsigned char>(*p) & 0x80) != 0) return false;
  }
  return true;
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

// nlohmann's parse_error text without the exception tag and the meaningless "line 1".
std::string json_error_text(const json::exception& e) {
  std::string what = e.what();
  if (auto close = what.find("] "); what.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
    what.erase(0, close + 2);
  }
  if (auto pos = what.find("at line 1, column"); pos != std::string::npos) what.replace(pos, 17, "at column");
  return "invalid JSON: " + what;
}

// Reads a millisecond count of `key` bounded to min..kMaxTimeMs; nullopt with `error` set otherwise.
std::optional<long long> read_ms(const json& v, const char* key, long long min, std::string& error) {
  const std::string range = std::string(key) + " must be an integer between " + std::to_string(min) + " and " +
                            std::to_string(kMaxTimeMs);
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u < static_cast<uint64_t>(min) || u > static_cast<uint64_t>(kMaxTimeMs)) {
      error = range + ", got " + v.dump();
      return std::nullopt;
    }
    return static_cast<long long>(u);
  }
  if (v.is_number_integer() || v.is_number_float()) {  // negative, or not an integer
    error = range + ", got " + v.dump();
    return std::nullopt;
  }
  error = std::string(key) + " must be an integer, got " + std::string(v.type_name());
  return std::nullopt;
}

BulkLine invalid(std::string error) {
  BulkLine out;
  out.kind = BulkLine::Kind::Invalid;
  out.error = std::move(error);
  return out;
}

}  // namespace

BulkLine parse_bulk_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (is_blank(line)) return BulkLine{};
  if (line.size() > kMaxBulkLineBytes) {
    return invalid("line longer than " + std::to_string(kMaxBulkLineBytes) + " bytes");
  }
  if (!is_ascii(line)) {
    if (auto bad = first_invalid_utf8(line); bad != std::string_view::npos) {
      return invalid("not valid UTF-8 (byte " + std::to_string(bad + 1) + ")");
    }
  }

  std::vector<std::string> seen;  // the top-level keys so far (a handful: a linear search)
  std::string duplicate;
  json doc;
  try {
    doc = json::parse(line.begin(), line.end(), [&](int depth, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::key && depth == 1) {
        const auto& key = parsed.get_ref<const std::string&>();
        if (std::find(seen.begin(), seen.end(), key) == seen.end()) {
          seen.push_back(key);
        } else if (duplicate.empty()) {
          duplicate = key;
        }
      }
      return true;
    });
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e400
    return invalid(json_error_text(e));
  }
  if (!doc.is_object()) return invalid("line must be a JSON object, got " + std::string(doc.type_name()));
  if (!duplicate.empty()) return invalid("duplicate key '" + escape_text(duplicate) + "'");

  BulkLine out;
  out.kind = BulkLine::Kind::Task;
  Task& req = out.request;
  bool has_id = false, has_delay = false, has_at = false, has_payload = false, has_payload_b64 = false;
  std::string error;
  for (auto& [key, value] : doc.items()) {
    if (key == "id") {
      if (!value.is_string()) return invalid("id must be a string, got " + std::string(value.type_name()));
      req.id = std::move(value.get_ref<std::string&>());
      has_id = true;
    } else if (key == "delay_ms") {
      auto ms = read_ms(value, "delay_ms", 0, error);
      if (!ms) return invalid(error);
      req.mode = ScheduleMode::Delay;
      req.ms = *ms;
      has_delay = true;
    } else if (key == "at_ms") {
      auto ms = read_ms(value, "at_ms", 1, error);
      if (!ms) return invalid(error);
      req.mode = ScheduleMode::At;
      req.ms = *ms;
      has_at = true;
    } else if (key == "payload") {
      if (!value.is_string()) {
        return invalid("payload must be a string, got " + std::string(value.type_name()) +
                       " (send JSON as a string, \"payload\": \"{\\\"n\\\": 1}\", or bytes as payload_b64)");
      }
      req.payload = std::move(value.get_ref<std::string&>());
      has_payload = true;
    } else if (key == "payload_b64") {
      if (!value.is_string()) {
        return invalid("payload_b64 must be a string of base64, got " + std::string(value.type_name()));
      }
      std::string why;
      auto bytes = base64_decode(value.get_ref<const std::string&>(), &why);
      if (!bytes) return invalid("payload_b64 is not valid base64: " + why);
      if (bytes->size() > kMaxPayloadBytes) {
        return invalid("payload_b64 decodes to " + std::to_string(bytes->size()) +
                       " bytes, larger than the limit of " + std::to_string(kMaxPayloadBytes));
      }
      req.payload = std::move(*bytes);
      has_payload_b64 = true;
    } else if (key == "stream") {
      if (!value.is_string()) return invalid("stream must be a string, got " + std::string(value.type_name()));
      req.stream = std::move(value.get_ref<std::string&>());
      if (req.stream.empty()) return invalid("stream must not be empty (omit it for the default stream)");
    } else if (key == "if_absent") {
      if (!value.is_boolean()) return invalid("if_absent must be true or false, got " + std::string(value.type_name()));
      req.options.if_absent = value.get<bool>();
    } else if (key == "debounce_max_ms") {
      auto ms = read_ms(value, "debounce_max_ms", 1, error);
      if (!ms) return invalid(error);
      req.options.debounce_max_ms = *ms;
    } else if (key == "max_late_ms") {
      auto ms = read_ms(value, "max_late_ms", 0, error);
      if (!ms) return invalid(error);
      req.options.max_late_ms = *ms;
    } else if (key == "traceparent") {
      if (!value.is_string()) return invalid("traceparent must be a string, got " + std::string(value.type_name()));
      req.options.traceparent = std::move(value.get_ref<std::string&>());
    } else if (key == "webhook") {
      if (!value.is_string()) return invalid("webhook must be a string, got " + std::string(value.type_name()));
      req.options.webhook = std::move(value.get_ref<std::string&>());
    } else {
      return invalid("unknown key '" + escape_text(key) +
                     "' (expected id, delay_ms or at_ms, payload or payload_b64, stream, if_absent, "
                     "debounce_max_ms, max_late_ms, traceparent, webhook)");
    }
  }
  if (!has_id) return invalid("missing key 'id'");
  if (has_delay && has_at) return invalid("delay_ms and at_ms are mutually exclusive");
  if (!has_delay && !has_at) return invalid("one of delay_ms or at_ms is required");
  if (has_payload && has_payload_b64) return invalid("payload and payload_b64 are mutually exclusive");
  if (auto err = task_error(req)) return invalid(*err);
  return out;
}

BulkReader::BulkReader(std::istream& in) : in_(in), block_(kReadBlockBytes, '\0') {}

bool BulkReader::fill() {
  const std::streamsize n = in_.rdbuf()->sgetn(block_.data(), static_cast<std::streamsize>(block_.size()));
  pos_ = 0;
  end_ = n > 0 ? static_cast<size_t>(n) : 0;
  return end_ > 0;
}

std::optional<std::string_view> BulkReader::next_raw(bool& overflow) {
  overflow = false;
  if (at_end_) return std::nullopt;
  constexpr size_t kKeep = kMaxBulkLineBytes + 1;  // one byte more: a '\r' or the overflow
  line_.clear();
  bool got_any = false;
  for (;;) {
    if (pos_ == end_ && !fill()) {
      at_end_ = true;
      in_.setstate(std::ios::eofbit);
      if (!got_any) return std::nullopt;
      return std::string_view(line_);
    }
    got_any = true;
    const char* start = block_.data() + pos_;
    const size_t avail = end_ - pos_;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', avail));
    const size_t length = newline != nullptr ? static_cast<size_t>(newline - start) : avail;
    pos_ += length + (newline != nullptr ? 1 : 0);
    if (newline != nullptr && line_.empty() && !overflow) {  // the whole line is in the block
      if (length <= kKeep) return std::string_view(start, length);
      overflow = true;
      return std::string_view(start, kKeep);
    }
    const size_t room = kKeep - std::min(line_.size(), kKeep);
    if (length > room) overflow = true;
    line_.append(start, std::min(length, room));
    if (newline != nullptr) return std::string_view(line_);
  }
}

std::optional<BulkLine> BulkReader::next() {
  bool overflow = false;
  while (auto line = next_raw(overflow)) {
    ++line_number_;
    if (overflow) return invalid("line longer than " + std::to_string(kMaxBulkLineBytes) + " bytes");
    BulkLine parsed = parse_bulk_line(*line);
    if (parsed.kind != BulkLine::Kind::Blank) return parsed;
  }
  return std::nullopt;
}

void BulkReader::skip_lines(size_t count) {
  bool overflow = false;
  for (size_t i = 0; i < count && next_raw(overflow); ++i) ++line_number_;
}

size_t kept_bytes_of(const BulkTask& task) {
  const Task& r = task.request;
  return sizeof(BulkTask) + r.id.capacity() + r.payload.capacity() + r.stream.capacity() +
         (r.options.traceparent ? r.options.traceparent->capacity() : 0) +
         (r.options.webhook ? r.options.webhook->capacity() : 0);
}

BulkValidation validate_bulk_stream(std::istream& in, size_t max_errors, std::string_view ns, size_t keep_bytes) {
  BulkValidation result;
  BulkReader reader(in);
  bool keeping = keep_bytes > 0;
  size_t kept_bytes = 0;
  while (auto line = reader.next()) {
    if (line->kind == BulkLine::Kind::Task && !ns.empty() && !line->request.stream.empty()) {
      if (auto err = stream_name_error(line->request.stream, ns)) {
        line->kind = BulkLine::Kind::Invalid;
        line->error = *err;
      }
    }
    if (line->kind == BulkLine::Kind::Task) {
      ++result.tasks;
      if (keeping) {
        BulkTask task{reader.line_number(), std::move(line->request)};
        kept_bytes += kept_bytes_of(task);
        if (kept_bytes <= keep_bytes) {
          result.kept.push_back(std::move(task));
        } else {
          keeping = false;
        }
      }
    } else {
      ++result.invalid;
      keeping = false;
      result.kept.clear();  // nothing will be sent
      result.kept.shrink_to_fit();
      if (result.errors.size() < max_errors) {
        result.errors.push_back("line " + std::to_string(reader.line_number()) + ": " + line->error);
      }
    }
  }
  result.kept_all = keeping;
  return result;
}

}  // namespace expiry
