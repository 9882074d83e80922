// See problem.h.
#include "api/problem.h"

#include <nlohmann/json.hpp>

namespace expiry {

const char* status_title(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
  }
  return "Error";
}

std::string problem_json(const Problem& problem) {
  const nlohmann::json body = {{"type", "about:blank"},
                               {"title", status_title(problem.status)},
                               {"status", problem.status},
                               {"detail", problem.detail}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace expiry
