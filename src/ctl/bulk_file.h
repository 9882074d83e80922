// The bulk schedule file format: one JSON object per line, parsed and validated without I/O.
// Line grammar: {"id": string, "delay_ms": int >= 0 | "at_ms": int > 0 (exactly one),
//                "payload": string | "payload_b64": base64 string (at most one; default ""),
//                "stream": non-empty string (optional),
//                "if_absent": bool, "debounce_max_ms": int >= 1, "max_late_ms": int >= 0,
//                "traceparent": W3C traceparent string, "webhook": endpoint name
//                (all optional; task_options_error applies)}
// "payload" is a JSON string, stored as its UTF-8 bytes (a JSON document must be sent as a
// string); "payload_b64" carries any bytes, in strict base64 (base64.h). Blank lines are
// skipped; unknown keys, duplicate keys and wrong types are errors.
#pragma once

#include <cstddef>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "producer/task.h"

namespace expiry {

constexpr size_t kMaxBulkLineBytes = 1 << 20;  // without the line break
constexpr size_t kMaxBulkErrors = 20;          // errors listed by validate_bulk_stream by default

struct BulkLine {
  enum class Kind { Blank, Task, Invalid };
  Kind kind = Kind::Blank;
  Task request;       // Task
  std::string error;  // Invalid: what is wrong, without the line number
};

// Parses one line given without its '\n' (a trailing '\r' is ignored). Raw bytes that are not
// valid UTF-8 make the line Invalid; "\u00ff"-style escapes are fine.
BulkLine parse_bulk_line(std::string_view line);

// Splits a stream into lines and parses them; reads the stream in blocks of kReadBlockBytes and
// holds at most kMaxBulkLineBytes + 1 bytes of a line besides (the rest of a longer line is
// skipped and the line reported Invalid). Reads from the stream's position on; sets its eofbit
// at the end.
class BulkReader {
 public:
  static constexpr size_t kReadBlockBytes = 1 << 16;

  explicit BulkReader(std::istream& in);
  BulkReader(const BulkReader&) = delete;
  BulkReader& operator=(const BulkReader&) = delete;

  // The next non-blank line (Task or Invalid), or nullopt at the end of the input.
  std::optional<BulkLine> next();
  // Passes over the next `count` lines without parsing them (fewer at the end of the input).
  void skip_lines(size_t count);
  // 1-based number of the line last returned by next() or skipped (blank lines count).
  size_t line_number() const { return line_number_; }

 private:
  // The next line without its '\n', or nullopt at the end; `overflow` when it was longer than
  // kMaxBulkLineBytes + 1 bytes (the view then holds its first bytes only). The view is valid
  // until the next call.
  std::optional<std::string_view> next_raw(bool& overflow);
  bool fill();  // reads the next block; false at the end of the input

  std::istream& in_;
  std::string block_;
  size_t pos_ = 0;  // of block_'s unread bytes: block_[pos_, end_)
  size_t end_ = 0;
  std::string line_;  // a line that spans blocks
  size_t line_number_ = 0;
  bool at_end_ = false;
};

// A valid task line and its 1-based line number.
struct BulkTask {
  size_t line = 0;
  Task request;
};

struct BulkValidation {
  size_t tasks = 0;                 // valid task lines
  size_t invalid = 0;               // invalid lines, all of them
  std::vector<std::string> errors;  // "line N: message" for the first max_errors invalid lines
  // With keep_bytes: the first valid tasks in file order, as many as fit in keep_bytes (by
  // kept_bytes_of), so that sending them needs no second parse; empty unless ok().
  std::vector<BulkTask> kept;
  bool kept_all = false;  // kept holds every task of the input
  bool ok() const { return invalid == 0; }
};

// The memory a kept task is counted for.
size_t kept_bytes_of(const BulkTask& task);

// Reads `in` to its end and validates every line. Never throws for bad content.
// With a namespace `ns`, a task whose stream lies in its task key space is invalid too.
BulkValidation validate_bulk_stream(std::istream& in, size_t max_errors = kMaxBulkErrors, std::string_view ns = {},
                                    size_t keep_bytes = 0);

}  // namespace expiry
