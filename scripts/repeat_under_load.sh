#!/usr/bin/env bash
# Runs a ctest selection RUNS times while LOAD busy loops take the CPU, and prints each run's
# failed tests and a total: the check that a tier does not fail at random on a busy machine.
# Usage: scripts/repeat_under_load.sh [ctest arguments, default: -L integration]
# Env: BUILD_DIR (build), RUNS (5), LOAD (busy loops, default: one per core), TEST_JOBS (2 per core).
# The busy loops run at the same priority as the tests and are stopped, by pid, on every exit.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${BUILD_DIR:-build}" && pwd)
runs=${RUNS:-5}
load=${LOAD:-$(nproc)}
[ $# -gt 0 ] || set -- -L integration

loops=()
stop_load() {
  local pid
  for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${loops[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq 1 "$load"); do
  (while :; do :; done) &
  loops+=("$!")
done

failed_runs=0
failures=0
for run in $(seq 1 "$runs"); do
  start=$(date +%s)
  rc=0
  (cd "$build" && ctest --output-on-failure -j "${TEST_JOBS:-$(($(nproc) * 2))}" "$@" >"$build/repeat-run-$run.log" 2>&1) || rc=$?
  list="$build/Testing/Temporary/LastTestsFailed.log"
  n=0
  if [ "$rc" -ne 0 ]; then
    n=1  # ctest itself failed (no test list): counted as one failure
    [ ! -s "$list" ] || n=$(wc -l <"$list")
    failed_runs=$((failed_runs + 1))
  fi
  failures=$((failures + n))
  echo "run $run of $runs: $n failed in $(($(date +%s) - start)) s (ctest exit $rc; log $build/repeat-run-$run.log)"
  [ "$n" -eq 0 ] || [ ! -s "$list" ] || sed 's/^/  failed: /' "$list"
done
echo "$failures failures in $failed_runs of $runs runs of ctest $* under $load busy loops"
[ "$failures" -eq 0 ]
