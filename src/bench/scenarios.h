// The scenarios of expiry-bench (docs/benchmarks.md) and the helpers they share. Each scenario
// adds its table and JSON to the report and records every run's integrity. They run in order on
// one Redis: bulk (leaves the far-future backdrop), idle, steady, then burst, backlog, cancel;
// deadline, cluster and recur, when asked for, last (cluster also uses a Redis Cluster).
#pragma once

#include <string>
#include <vector>

#include "bench/bench_context.h"
#include "bench/report.h"
#include "bench/stream_reader.h"
#include "io/sync/sync_connection.h"

namespace expiry::bench {

// (d) expiry-ctl schedule --file vs FCALL expiry_schedule pipelined 128 deep, and Redis memory
// per pending task. Leaves the ctl-written far-future tasks as the backdrop for idle and steady.
void run_bulk_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// The relay with nothing due: commands/s it sends and its CPU%.
void run_idle_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// (a) a paced producer with a far-future backdrop and unrelated TTL keys; relay and baselines.
void run_steady_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// (b) every task due in the same millisecond; relay, fixed-poll and the sweep ceiling.
void run_burst_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// (c) every task overdue before the relay starts; relay, fixed-poll and the sweep ceiling.
void run_backlog_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// (e) FCALL expiry_cancel, unpipelined and pipelined.
void run_cancel_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// (f) tasks due over a few seconds; the relay killed -9 half-way and a new one started.
void run_kill_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// deadline (issue 20; not run by default): bulk cancel of ctx.sizes.deadline_tasks pending tasks
// by prefix with a 1-ms PING probe beside it, the resume of as many held tasks with the relay
// running, and the sweep's claim cost with and without a lateness limit. Flushes Redis.
void run_deadline_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// cluster: the steady load and a burst drain, with the relay, on the single Redis (ctx.redis)
// and on the Redis Cluster (ctx.cluster_url) in one run: lateness, claims/s and Redis CPU per
// claim, side by side. Flushes both.
void run_cluster_scenario(const BenchContext& ctx, BenchReport& report);
// recur (issue 34; not run by default): ctx.sizes.recur_schedules recurring schedules firing once
// a minute each, created pipelined, then the relay for recur_minutes: occurrences lost and
// duplicated, lateness, Redis memory per schedule and CPU per occurrence, the relay's CPU, RSS
// and refills. Flushes Redis.
void run_recur_scenario(const BenchContext& ctx, SyncConnection& conn, BenchReport& report);
// The targets of the issue, from what the scenarios put into the report's JSON.
void evaluate_targets(BenchReport& report);

// Deletes the output stream and creates it again, empty, with the consumer group.
void reset_stream(const BenchContext& ctx, SyncConnection& conn);
// Forwards every task still due (via = bench-drain), after the system under test was stopped.
long long drain_due_tasks(const BenchContext& ctx, SyncConnection& conn);
// After drain_due_tasks: waits until the reader has every entry of the stream (XLEN), up to a
// minute, so a slow reader is not mistaken for a lost task; then stops it and returns the entries.
std::vector<ReceivedEntry> finish_reader(const BenchContext& ctx, SyncConnection& conn, StreamReader& reader);
// Makes sure the schedule holds at least `n` far-future tasks ("far-<i>", due in a day or later).
void ensure_backdrop(const BenchContext& ctx, SyncConnection& conn, size_t n);
// The steady scenarios' delay of task i: 2000-2999 ms, pseudo-random, fixed per i.
long long steady_delay_ms(size_t i);
// Prints a progress line to stderr (the table goes to stdout).
void progress(const std::string& line);

}  // namespace expiry::bench
