// The table of fuzz targets; see fuzz_targets.h.
#include "fuzz_targets.h"

namespace expiry::fuzz {

const std::vector<FuzzTarget>& fuzz_targets() {
  static const std::vector<FuzzTarget> targets = {
      {"redis_url", fuzz_redis_url},   {"keyevent", fuzz_keyevent},         {"config_json", fuzz_config_json},
      {"bulk_line", fuzz_bulk_line},   {"stream_entry", fuzz_stream_entry}, {"recur_rule", fuzz_recur_rule},
  };
  return targets;
}

}  // namespace expiry::fuzz
