// The reads behind the web console (docs/api.md, "Web console"), each bounded in cost whatever
// the size of the namespace: GET /v1/overview, /v1/timeline, /v1/recurring and
// /v1/tasks/{id}/state, on a worker's Producer connection. Every schedule read is O(log N) per
// bucket (ZCARD, ZCOUNT, ZRANGE 0 0); every stream read is capped in entries and in bytes, in
// pages, and keeps only the fields it uses. What the API's
// Redis user may not read (XINFO, PUBSUB under a narrow ACL) is null, not an error.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace expiry {

class Producer;

// Stream entries read at most, across the streams, for the activity sample and the dead-letter
// reasons of the overview, and per stream for a task's state; and the bytes read at most for
// each (io/sync/stream_scan.h: payloads cost their size even where only a few fields are used).
constexpr long long kActivitySampleEntries = 2000;
constexpr long long kDeadReasonScan = 1000;
constexpr long long kStateScanEntries = 1000;
constexpr size_t kActivityScanBytes = 4u << 20;
constexpr size_t kDeadReasonScanBytes = 1u << 20;
constexpr size_t kStateScanBytes = 2u << 20;
constexpr size_t kScanPageBytes = 256u << 10;
// The window of the overview's forwarded rate and lateness.
constexpr long long kActivityWindowMs = 60'000;

// Pending, overdue and pause per bucket; forwarded per second and lateness p50/p99 from the
// stream entries of the last minute (at most kActivitySampleEntries); dead letters per reason
// (the newest kDeadReasonScan); consumer groups and their consumers; relays by their health
// channels. `dead_stream` as list_dead_letters.
nlohmann::json read_overview(Producer& producer, const std::string& dead_stream);

// Tasks due in each bar of kTimelineRanges, plus the overdue and those due beyond a day.
nlohmann::json read_timeline(Producer& producer);

// Up to `limit` recurring schedules (SSCAN of each bucket's index, in its order) with their
// armed occurrence: {"schedules": [...], "count", "more"}.
nlohmann::json read_recurring(Producer& producer, long long limit);

// Where task `id` is: pending (its details), fired (the newest entry for it among the last
// kStateScanEntries (and 2 x kStateScanBytes across both streams) of its bucket's default stream, and for each group whether it read and
// acknowledged it), dead (the newest dead letter for it among the last kStateScanEntries of its
// dead stream), or unknown.
nlohmann::json read_task_state(Producer& producer, const std::string& dead_stream, const std::string& id);

}  // namespace expiry
