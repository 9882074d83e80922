// Error types thrown at the edges (startup, config, CLI). Inside the event loop errors are
// values (Reply::Type::Error / IoError); nothing here may cross a hiredis callback.
#pragma once

#include <stdexcept>
#include <string>

namespace expiry {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Invalid settings, URLs, ids or payloads: the user must fix the input.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// Redis or a sentinel refused our credentials for good: a wrong or missing password, a user that
// may not log in. A configuration error: retrying with the same settings cannot cure it.
class AuthError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// Redis could not be reached, or the connection broke.
class IoError : public Error {
 public:
  using Error::Error;
};

// Redis answered with an error reply (wrong password, missing feature, WRONGTYPE ...).
class ReplyError : public Error {
 public:
  using Error::Error;
};

}  // namespace expiry
