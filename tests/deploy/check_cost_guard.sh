#!/usr/bin/env bash
# The bench's cost guard (src/bench/cost_report.js, run by scripts/bench.sh --guard in CI): on two
# fixed JSON files (relay: 0.3 s of Redis CPU and 480 B per task; BullMQ: 0.5 s, so the ratio is 0.6),
# a baseline the run is within passes, one it is more than 25 % worse than fails with the figure
# named, and a run without BullMQ's figures fails rather than passing unmeasured.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
report=$here/../../src/bench/cost_report.js
fixtures=$here/cost_guard
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

guard() {  # guard BASELINE_JSON [bullmq json or none]: runs the report, prints its output, returns its exit code
  echo "$1" >"$work/baseline.json"
  local args=(--relay "$fixtures/relay.json" --baseline "$work/baseline.json")
  [ "${2:-}" = none ] || args+=(--bullmq "$fixtures/bullmq.json")
  node "$report" "${args[@]}" >"$work/out" 2>&1
}

guard '{"steady_cpu_ratio_vs_bullmq": 0.5, "memory_bytes_per_task": 400, "tolerance": 0.25}' ||
  { cat "$work/out"; fail "0.6 and 480 B are within 0.5 and 400 B + 25 %"; }
grep -q 'steady Redis CPU relay/BullMQ: 0.60' "$work/out" || { cat "$work/out"; fail "the ratio is not 0.60"; }
grep -q '| fcall (with what its scripts ran) *| *200.0 µs, 1.30 calls' "$work/out" || { cat "$work/out"; fail "no per-call-type row"; }

code=0; guard '{"steady_cpu_ratio_vs_bullmq": 0.4, "memory_bytes_per_task": 400, "tolerance": 0.25}' || code=$?
[ "$code" = 1 ] || { cat "$work/out"; fail "a ratio 0.6 over 0.4 + 25 % passed (exit $code)"; }
grep -q 'relay/BullMQ 0.60 is more than 25 % above the baseline 0.40.*FAIL' "$work/out" || { cat "$work/out"; fail "the CPU failure is not named"; }

code=0; guard '{"steady_cpu_ratio_vs_bullmq": 0.5, "memory_bytes_per_task": 380, "tolerance": 0.25}' || code=$?
[ "$code" = 1 ] || { cat "$work/out"; fail "480 B over 380 B + 25 % passed (exit $code)"; }
grep -q 'memory per pending task, bytes 480.00 is more than 25 % above' "$work/out" || { cat "$work/out"; fail "the memory failure is not named"; }

code=0; guard '{"steady_cpu_ratio_vs_bullmq": 0.5, "memory_bytes_per_task": 400, "tolerance": 0.25}' none || code=$?
[ "$code" = 1 ] || { cat "$work/out"; fail "a run without BullMQ passed the guard (exit $code)"; }
grep -q 'not measured in this run' "$work/out" || { cat "$work/out"; fail "the missing figure is not named"; }
echo "cost guard: pass, CPU over, memory over and unmeasured all behave"
