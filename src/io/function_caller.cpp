// See function_caller.h.
#include "io/function_caller.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "functions/function_library.h"

namespace expiry {

FunctionCaller::FunctionCaller(RedisConnection& conn, std::string library_source)
    : conn_(conn), library_source_(library_source.empty() ? function_library_source() : std::move(library_source)) {}

void FunctionCaller::load(RedisConnection::ReplyCallback done) {
  conn_.command({"FUNCTION", "LOAD", "REPLACE", library_source_}, std::move(done));
}

void FunctionCaller::fcall(std::vector<std::string> argv, RedisConnection::ReplyCallback cb) {
  auto shared_argv = std::make_shared<std::vector<std::string>>(std::move(argv));
  conn_.command(*shared_argv, [this, shared_argv, cb = std::move(cb)](const Reply& reply) {
    if (!is_function_missing(reply)) {
      cb(reply);
      return;
    }
    ++reloads_;
    spdlog::warn("a function of the library is missing on the server; loading the library again");
    load([this, shared_argv, cb](const Reply& loaded) {
      if (loaded.failed()) {
        cb(loaded);
        return;
      }
      conn_.command(*shared_argv, cb);
    });
  });
}

}  // namespace expiry
