// How Producer::list reads the pending tasks in due order: a page at a time, merged across the
// buckets, each bucket read with bounded read-only scripts (one pipelined round trip per refill),
// and the details of the listed tasks read after the page, a chunk at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "io/sync/routed_client.h"
#include "producer/task_placement.h"
#include "producer/task_reads.h"

namespace expiry {

// Tasks whose details are read per pipelined round trip.
constexpr size_t kDetailChunk = 500;

// Producer::list's contract: throws ConfigError for a count outside 1..kMaxListCount or a cursor
// that encode_list_cursor did not make.
TaskPage list_tasks(RoutedClient& redis, const TaskPlacement& placement, const ListQuery& query);

// Producer::list_details's contract.
void read_listed_details(RoutedClient& redis, const TaskPlacement& placement, const std::vector<ListedTask>& tasks,
                         size_t payload_head_bytes,
                         const std::function<void(size_t index, const ListedTaskDetails&)>& each);

}  // namespace expiry
