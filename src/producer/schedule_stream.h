// How Producer::schedule_stream sends a feed of tasks (schedule_feed.h): in expiry_schedule_many
// calls of one bucket each, or in expiry_schedule calls of one task each for a Redis user whose
// ACL names expiry_schedule only (docs/security.md); on one Redis in pipelined windows, two in
// flight; on a cluster in chunks pipelined per node. A stop (ScheduleFeed::stopped) ends the
// reading, never the sending of what was read, so the tasks written are always the first ones
// the feed handed out when nothing was refused.
#pragma once

#include "io/sync/routed_client.h"
#include "producer/schedule_feed.h"
#include "producer/task_placement.h"

namespace expiry {

// Loads the function library where it is missing, asks whether the user may call
// expiry_schedule_many (an empty call on bucket 0), then sends the feed until it ends, a call
// is refused or it is stopped; every reply of what was sent is read and answered. Throws what
// the client throws (after ScheduleFeed::on_send_failed for a failure while sending).
void stream_schedules(RoutedClient& redis, const TaskPlacement& placement, ScheduleFeed& feed);

}  // namespace expiry
