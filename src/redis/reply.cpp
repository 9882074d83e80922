// See reply.h.
#include "redis/reply.h"

#include <sstream>

namespace expiry {

std::string Reply::describe() const {
  switch (type) {
    case Type::Nil:
      return "(nil)";
    case Type::Status:
    case Type::String:
      return str;
    case Type::Error:
      return "error: " + str;
    case Type::IoError:
      return "i/o error: " + str;
    case Type::Integer:
      return std::to_string(integer);
    case Type::Array: {
      std::ostringstream out;
      out << "[";
      for (size_t i = 0; i < elements.size(); ++i) out << (i ? ", " : "") << elements[i].describe();
      out << "]";
      return out.str();
    }
  }
  return "?";
}

}  // namespace expiry
