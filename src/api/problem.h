// RFC 9457 problem details: the body of every error the API answers
// (application/problem+json with type, title, status and detail). Pure.
#pragma once

#include <string>

namespace expiry {

constexpr const char* kProblemContentType = "application/problem+json";

struct Problem {
  int status = 500;
  std::string detail;
};

// The standard reason phrase of an HTTP status ("Not Found"); "Error" for one the API never sends.
const char* status_title(int status);

// {"type":"about:blank","title":...,"status":...,"detail":...}: the title is status_title's;
// a detail that is not valid UTF-8 has its bad bytes replaced by U+FFFD.
std::string problem_json(const Problem& problem);

}  // namespace expiry
