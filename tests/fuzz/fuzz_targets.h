// The fuzz targets: one plain function per parser, shared by the libFuzzer executables
// (libfuzzer_main.cpp, EXPIRY_RELAY_FUZZ with clang) and fuzz_corpus_replay (any compiler).
// A target returns normally for any input the code under test handles as specified; a broken
// invariant or an unexpected exception ends the process (libFuzzer then saves the input).
#pragma once

#include <string_view>
#include <vector>

namespace expiry::fuzz {

// parse_redis_url and RedisEndpoint::redacted (src/config/redis_url.h).
void fuzz_redis_url(std::string_view input);
// db_from_expired_channel, KeyLayout, task_id_error, namespace_error (src/functions/key_layout.h).
void fuzz_keyevent(std::string_view input);
// Settings::resolve over relay_option_specs() with the input as the config file, then
// relay_config_from (src/config/settings.h, src/config/relay_config.h).
void fuzz_config_json(std::string_view input);
// parse_bulk_line and validate_bulk_stream (src/ctl/bulk_file.h).
void fuzz_bulk_line(std::string_view input);
// Reply decoding: parse_stream_entries, decode_forwarded_task, decode_claim/sweep/schedule,
// order_key_of and the CLI's reply helpers, on Reply trees decoded from the input (resp_decoder.h).
void fuzz_stream_entry(std::string_view input);
// parse_recur_rule, canonical_text, next_occurrences, TimeZone::find, parse_time_arg (src/recur/).
void fuzz_recur_rule(std::string_view input);

struct FuzzTarget {
  const char* name;  // "redis_url": executable fuzz_redis_url, seeds in corpus/redis_url/
  void (*run)(std::string_view input);
};

// Every target, in a fixed order.
const std::vector<FuzzTarget>& fuzz_targets();

}  // namespace expiry::fuzz
