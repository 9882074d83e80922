// See bucket_calls.h.
#include "producer/bucket_calls.h"

#include <algorithm>

#include "base/errors.h"
#include "functions/function_library.h"
#include "io/sync/sync_connection.h"

namespace expiry {

RangeTotals walk_buckets(RoutedClient& redis, const TaskPlacement& placement, const char* what,
                         const RangeCallOf& call_of, const RangeProgressFn& progress) {
  RangeTotals totals;
  for (int b = 0; b < placement.buckets; ++b) {
    const KeyLayout keys(placement.ns, b);
    std::string cursor;
    do {
      const Reply reply = redis.fcall(call_of(keys, cursor), TaskPlacement::slot_of_bucket(b));
      expect_ok(reply, what);
      const auto result = decode_range(reply);
      if (!result) throw ReplyError(std::string(what) + ": unexpected reply " + reply.describe());
      totals.acted += result->acted;
      totals.examined += result->examined;
      cursor = result->cursor;
      if (progress) progress(RangeProgress{totals, b, placement.buckets});
    } while (!cursor.empty());
  }
  return totals;
}

PauseResult call_every_bucket(RoutedClient& redis, const TaskPlacement& placement, const char* what, bool latest,
                              const std::function<std::vector<std::string>(const KeyLayout& keys)>& call_of) {
  PauseResult total;
  for (int b = 0; b < placement.buckets; ++b) {
    const Reply reply = redis.fcall(call_of(KeyLayout(placement.ns, b)), TaskPlacement::slot_of_bucket(b));
    expect_ok(reply, what);
    const auto result = decode_pause(reply);
    if (!result) throw ReplyError(std::string(what) + ": unexpected reply " + reply.describe());
    total.value = latest ? std::max(total.value, result->value) : total.value + result->value;
    total.pending += result->pending;
    total.overdue += result->overdue;
  }
  return total;
}

}  // namespace expiry
