// POST /v1/tasks/batch's writes: the valid tasks of a batch sent as one stream of
// expiry_schedule_many calls, pipelined (Producer::schedule_stream, as `expiry-ctl schedule
// --file` sends a file), and each item's own result, in the request's order.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "api/request_body.h"
#include "api/tokens.h"

namespace expiry {

class Producer;

// Writes the items that are valid and answers {"results": [...], "written": N, "failed": M}.
// Each result has the item's "id" (null when it had none) and a "status":
// - 201 (created) or 200 (replaced, or kept by if_absent), with due_ms, replaced and kept, as
//   PUT /v1/tasks/{id} answers;
// - or an "error": 400 an item refused before anything is sent (its body, or a stream outside
//   the namespace), 403 an id outside the prefixes of `caller` (nullptr: no narrowing), 500 a
//   task Redis refused (503 when Redis was in a passing state: loading, failing over ...), 503
//   no reply to its call (written or not), 424 not written because another task's call was
//   refused (an expiry_schedule_many call writes all of its tasks or none; no call is sent
//   after a refusal).
// Nothing is sent when no item is valid. Throws what the Producer throws when Redis cannot be
// reached (IoError: some tasks may have been written; scheduling again replaces them by id).
nlohmann::json schedule_batch(Producer& producer, const std::vector<BatchItem>& items, const TokenGrant* caller);

}  // namespace expiry
