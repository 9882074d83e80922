// POST /v1/tasks/cancel and /v1/tasks/run-now: one bounded step of a bulk action over the
// pending tasks a prefix or a due range selects. The same library calls as `expiry-ctl cancel`
// and `run-now` with --prefix / --due-before / --due-after (Producer::cancel_range,
// run_now_range: expiry_cancel_range and expiry_run_now_range, kRangeCallLimit members per call,
// bucket by bucket), but a request stops after `limit` members examined and answers a cursor to
// go on from, so that one request holds its worker and Redis for a bounded time.
#pragma once

#include <nlohmann/json.hpp>

#include "api/request_body.h"
#include "inspector/inspector.h"  // RangeAction

namespace expiry {

class Producer;

// Acts on the tasks `request` selects, from its cursor (or the start), until `request.limit`
// members were examined or every bucket is done. Answers {"cancelled" | "promoted": N,
// "examined": M, "more": bool, "next_cursor": text or null}: with `more`, call again with the
// same body and "cursor": next_cursor. The due range is due_from_ms <= due < due_to_ms; run-now
// never touches a task due already. Throws ConfigError for a cursor naming a bucket the
// namespace does not have, and what the Producer's client throws (IoError, ReplyError).
nlohmann::json act_on_range(Producer& producer, RangeAction action, const RangeRequest& request);

}  // namespace expiry
