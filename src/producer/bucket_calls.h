// Calls that act on a whole namespace one bucket at a time, each on the node owning the
// bucket: the bounded range walks (expiry_cancel_range, expiry_run_now_range), which loop on
// the cursor the library returns, and pause/resume. Calls go one at a time: a pipeline of them
// would hold Redis for their sum.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "functions/key_layout.h"
#include "io/sync/routed_client.h"
#include "producer/producer.h"
#include "producer/task_placement.h"

namespace expiry {

// Members each range call examines (the library stops a call after ~2 ms besides).
constexpr int kRangeCallLimit = 500;

// The call a range walk makes on `keys`' bucket from `cursor` ("" at the start).
using RangeCallOf = std::function<std::vector<std::string>(const KeyLayout& keys, const std::string& cursor)>;

// Walks every bucket with the calls `call_of` makes until each returns an empty cursor,
// calling `progress` after each; `what` names the function in errors.
RangeTotals walk_buckets(RoutedClient& redis, const TaskPlacement& placement, const char* what,
                         const RangeCallOf& call_of, const RangeProgressFn& progress);

// One call of `what` per bucket (`call_of(keys)`), decoded as expiry_pause's reply: pending
// and overdue summed, and `value` summed or, with `latest`, its largest.
PauseResult call_every_bucket(RoutedClient& redis, const TaskPlacement& placement, const char* what, bool latest,
                              const std::function<std::vector<std::string>(const KeyLayout& keys)>& call_of);

}  // namespace expiry
