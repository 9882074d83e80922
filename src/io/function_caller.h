// FCALLs of a Redis Function library over a command connection, reloading the library once
// when Redis says a function is missing (FUNCTION FLUSH, or a restart that lost it).
#pragma once

#include <string>
#include <vector>

#include "io/redis_connection.h"

namespace expiry {

class FunctionCaller {
 public:
  // `library_source`: the Lua library to (re)load; default expiry_v1.
  explicit FunctionCaller(RedisConnection& conn, std::string library_source = {});
  FunctionCaller(const FunctionCaller&) = delete;
  FunctionCaller& operator=(const FunctionCaller&) = delete;

  // FUNCTION LOAD REPLACE; `done` gets the reply.
  void load(RedisConnection::ReplyCallback done);
  // Sends `argv` (an FCALL); on "Function not found" loads the library and sends it once more.
  void fcall(std::vector<std::string> argv, RedisConnection::ReplyCallback cb);

  uint64_t reloads() const { return reloads_; }

 private:
  RedisConnection& conn_;
  const std::string library_source_;
  uint64_t reloads_ = 0;
};

}  // namespace expiry
