// The one answer to "which bucket and slot holds task X": how a namespace is laid out once it
// is known where it lives (one Redis or a cluster) and how many buckets it has (NS:buckets,
// functions/bucket_plan.h). A task lives in bucket CRC16(id) mod buckets, every key of bucket B
// carries the hash tag {B}, and a command on them is routed by that tag's slot. expiry-ctl,
// order-sim, the bench and the Producer all ask this. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "functions/key_layout.h"
#include "producer/task.h"

namespace expiry {

struct TaskPlacement {
  std::string ns;
  bool cluster = false;
  int buckets = 1;
  std::string stream;  // the relay's stream on a single-bucket Redis (the `stream` setting)
  int db = 0;          // the selected database (0 on a cluster), named in the wake messages

  // True when each bucket has its own streams NS:{b}:stream (uses_bucket_streams).
  bool bucket_streams() const;
  // The bucket of task `id` (CRC16(id) mod buckets) and its keys.
  int bucket_of_task(std::string_view id) const;
  KeyLayout keys_of_task(std::string_view id) const { return KeyLayout(ns, bucket_of_task(id)); }
  // The hash slot a command on bucket `b`'s keys is routed by.
  static int slot_of_bucket(int b);
  int slot_of_task(std::string_view id) const { return slot_of_bucket(bucket_of_task(id)); }
  // The stream a task of bucket `b` without a stream of its own is forwarded to.
  std::string default_stream_of_bucket(int b) const;
  // NS:{b}:paused, bucket `b`'s pause flag (expiry_pause: the end ms, 0 until resumed).
  std::string paused_key_of_bucket(int b) const { return ns + ":{" + std::to_string(b) + "}:paused"; }
  // Every stream the relay forwards to by default: the bucket streams in bucket order, or the
  // one configured stream.
  std::vector<std::string> streams() const;
  // FCALL expiry_schedule of `task` on its bucket's keys, naming `db` (the form with options
  // when it has any); send it routed by slot_of_task(task.id).
  std::vector<std::string> schedule_argv(const Task& task) const;
};

// The bucket of task `id` in a namespace of `buckets` buckets (0 for one bucket); what
// TaskPlacement::bucket_of_task answers, for code that knows only the count.
int bucket_of_task(std::string_view id, int buckets);

}  // namespace expiry
