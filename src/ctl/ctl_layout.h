// How expiry-ctl addresses a namespace once it knows where it lives: one Redis or a cluster,
// and the bucket count agreed with NS:buckets. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/key_layout.h"

namespace expiry {

struct CtlLayout {
  std::string ns;
  bool cluster = false;
  int buckets = 1;
  std::string stream;  // the relay's stream on a single-bucket Redis (CtlTarget::stream)
  int db = 0;          // the selected database (0 on a cluster), named in the wake messages

  // True when each bucket has its own streams NS:{b}:stream (uses_bucket_streams).
  bool bucket_streams() const;
  // The bucket of task `id` (CRC16(id) mod buckets) and its keys.
  int bucket_of_task(std::string_view id) const;
  KeyLayout keys_of_task(std::string_view id) const { return KeyLayout(ns, bucket_of_task(id)); }
  // The hash slot a command on bucket `b`'s keys is routed by.
  static int slot_of_bucket(int b);
  // The stream a task of bucket `b` without a stream of its own is forwarded to.
  std::string default_stream_of_bucket(int b) const;
  // NS:{b}:paused, bucket `b`'s pause flag (expiry_pause: the end ms, 0 until resumed).
  std::string paused_key_of_bucket(int b) const { return ns + ":{" + std::to_string(b) + "}:paused"; }
  // Every stream the relay forwards to by default: the bucket streams in bucket order, or the
  // one configured stream.
  std::vector<std::string> streams() const;
};

// Orders stream entry ids ("<ms>-<seq>", or "<ms>") by time, then sequence; ids that do not
// parse come after those that do, in text order. tail merges the bucket streams by it.
bool entry_id_before(std::string_view a, std::string_view b);

// The message of schedule --wait-replicas when fewer replicas than `wanted` acknowledged the
// writes within `timeout_ms`.
std::string replica_shortfall_message(long long wanted, long long acknowledged, long long timeout_ms, bool cluster);

}  // namespace expiry
