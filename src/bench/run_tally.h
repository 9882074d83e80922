// The outcome of one run, counted from what the bench's reader saw in the stream: every task of
// the run must appear exactly once (lost = never, duplicated = extra copies), and lateness is
// fired_ms (and, as a cross-check, the reader's arrival time) minus the moment the task could
// first fire: its due time, or the run's start when it was already overdue (backlog).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/lateness_stats.h"
#include "bench/stream_reader.h"

namespace expiry::bench {

// Entries whose via is this were forwarded by the bench after the system under test had been
// stopped (its deadline passed); they count as censored lateness, not as lost.
constexpr const char* kDrainVia = "bench-drain";

struct RunTally {
  size_t expected = 0;
  size_t forwarded = 0;   // distinct tasks forwarded by the system under test
  size_t drained = 0;     // distinct tasks the bench had to forward after the deadline
  size_t lost = 0;        // tasks of the run never seen in the stream
  size_t duplicated = 0;  // extra stream entries for a task already seen
  size_t foreign = 0;     // entries of other tasks (e.g. a far-future backdrop task fired early) or undecodable
  std::map<std::string, size_t> via;  // entries per via field
  LatenessSummary fired;    // fired_ms - max(due_ms, start_ms)
  LatenessSummary arrival;  // reader arrival - max(due_ms, start_ms)
  long long first_fired_ms = 0;  // over tasks forwarded by the system under test
  long long last_fired_ms = 0;
  std::vector<double> fired_ms_values;  // the observed fired lateness (for CDF plots)
};

// `start_ms`: the wall time the run's tasks could first be forwarded from (0: their due times).
// `censor_ms`: what the drained tasks' lateness is known to exceed.
RunTally tally_run(const std::vector<ReceivedEntry>& entries, const std::string& prefix, size_t expected,
                   long long start_ms, double censor_ms);

}  // namespace expiry::bench
