// See task_ranges.h.
#include "api/task_ranges.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/errors.h"
#include "functions/function_library.h"
#include "producer/bucket_calls.h"
#include "inspector/inspector.h"
#include "producer/producer.h"
#include "producer/task_placement.h"

namespace expiry {
namespace {

// The filter the library applies. Its bounds are exclusive: due_from_ms F is after_ms F - 1
// (due times are whole ms). expiry_run_now_range takes no lower bound (it starts after now):
// see first_step.
RangeFilter filter_of(const RangeRequest& request) {
  RangeFilter filter;
  filter.prefix = request.prefix;
  if (request.due_from_ms && *request.due_from_ms > 0) filter.after_ms = *request.due_from_ms - 1;
  filter.before_ms = request.due_to_ms;
  return filter;
}

// The library cursor a bucket's walk starts from. For run-now with due_from_ms F: "F:0", the
// library's own cursor form ("<score>:<skip>", walk_range in src/lua/expiry/ranges.lua), so
// the walk starts at due F; expiry_run_now_range drops a cursor at or before its clock's now,
// as the tasks there are due already.
std::string first_step(RangeAction action, const RangeRequest& request) {
  if (action == RangeAction::RunNow && request.due_from_ms) return std::to_string(*request.due_from_ms) + ":0";
  return "";
}

}  // namespace

nlohmann::json act_on_range(Producer& producer, RangeAction action, const RangeRequest& request) {
  const TaskPlacement& layout = producer.placement();
  RangeCursor at = request.cursor.value_or(RangeCursor{0, first_step(action, request)});
  if (at.bucket >= layout.buckets) {
    throw ConfigError("cursor names bucket " + std::to_string(at.bucket) + "; the namespace has " +
                      std::to_string(layout.buckets));
  }
  const RangeFilter filter = filter_of(request);
  Inspector inspector(producer);
  long long acted = 0;
  long long examined = 0;
  while (at.bucket < layout.buckets && examined < request.limit) {
    const int limit = static_cast<int>(std::min<long long>(kRangeCallLimit, request.limit - examined));
    const RangeResult result = inspector.range_step(action, at.bucket, filter, at.step, limit);
    acted += result.acted;
    examined += result.examined;
    if (result.cursor.empty()) {
      at = RangeCursor{at.bucket + 1, first_step(action, request)};
    } else {
      at.step = result.cursor;
      if (result.examined == 0) break;  // a call that made no progress: the client calls again
    }
  }
  const bool more = at.bucket < layout.buckets;
  return {{action == RangeAction::Cancel ? "cancelled" : "promoted", acted},
          {"examined", examined},
          {"more", more},
          {"next_cursor", more ? nlohmann::json(range_cursor_text(at)) : nlohmann::json()}};
}

}  // namespace expiry
