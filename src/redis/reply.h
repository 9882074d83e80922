// A Redis reply as a plain value, so that nothing outside src/io/ sees hiredis.
#pragma once

#include <string>
#include <vector>

namespace expiry {

struct Reply {
  enum class Type { Nil, Status, Error, Integer, String, Array, IoError };

  Type type = Type::Nil;
  std::string str;  // Status, Error, String, and IoError's reason
  long long integer = 0;
  std::vector<Reply> elements;

  // A reply as a server would send it, for decoders' tests and fakes.
  static Reply of(Type type, std::string text) {
    Reply r;
    r.type = type;
    r.str = std::move(text);
    return r;
  }
  static Reply of_integer(long long value) {
    Reply r;
    r.type = Type::Integer;
    r.integer = value;
    return r;
  }
  static Reply of_array(std::vector<Reply> elements) {
    Reply r;
    r.type = Type::Array;
    r.elements = std::move(elements);
    return r;
  }
  static Reply io_error(std::string why) {
    Reply r;
    r.type = Type::IoError;
    r.str = std::move(why);
    return r;
  }
  // Server error reply, or the connection failed before a reply came.
  bool failed() const { return type == Type::Error || type == Type::IoError; }
  bool is_io_error() const { return type == Type::IoError; }
  // Compact text for logs and error messages.
  std::string describe() const;
};

}  // namespace expiry
