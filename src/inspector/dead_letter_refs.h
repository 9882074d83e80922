// Where the dead letters are, and how an operator names one entry: the pure parts of
// `expiry-ctl dead` and of expiry-api's GET /v1/dead and POST /v1/dead/replay. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "producer/task_placement.h"

namespace expiry {

// One dead-letter stream: NS:{B}:dead per bucket, or on a single-bucket Redis the consumers'
// dead stream (default <stream>:dead, as consumer_config.cpp sets it).
struct DeadStream {
  std::string key;
  int bucket = 0;  // the bucket the key is in (0 on a single-bucket Redis)
  int slot = 0;    // the slot commands on it are routed by
};

std::vector<DeadStream> dead_streams(const TaskPlacement& layout, const std::string& dead_stream);

// An entry as the commands print and accept it: "<entry-id>" on a single stream, and
// "<bucket>/<entry-id>" with bucket streams (entry ids are per stream).
struct DeadRef {
  size_t stream = 0;  // index into dead_streams()
  std::string entry_id;
};
std::string format_dead_ref(const std::vector<DeadStream>& streams, const DeadRef& ref);
// The entry `text` names, or nullopt with a reason in `error`.
std::optional<DeadRef> parse_dead_ref(const std::vector<DeadStream>& streams, std::string_view text,
                                      std::string* error);

// The ms part of an entry id ("1700000000000-3"), or nullopt.
std::optional<long long> entry_id_ms(std::string_view entry_id);

}  // namespace expiry
