#!/usr/bin/env bash
# The chaos soak: builds what it needs, then runs the chaos test (tests/chaos) in soak mode for
# SECONDS (default 600): more orders, bigger bursts, every fault many more times. Prints the test's
# output and, last, its summary line. Stops by itself; Ctrl-C stops everything it started.
# Usage: scripts/chaos.sh [SECONDS >= 60]
# Env: EXPIRY_CHAOS_SEED=<n> replays a run (the seed is printed); BUILD_DIR (build).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 60 ]; then
  echo "usage: scripts/chaos.sh [SECONDS >= 60]" >&2
  exit 2
fi
scripts/deps.sh
BUILD_DIR=${BUILD_DIR:-build}
echo "building chaos_test (first time: a few minutes) ..."
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target chaos_test >/dev/null
log=$(mktemp /tmp/expiry-chaos-soak.XXXXXX.log)
echo "chaos soak for ${seconds} s; full output also in $log"
# The test bounds every wait itself. Ctrl-C reaches it and its children (one process group).
set +e
EXPIRY_CHAOS_SOAK_S=$seconds "$BUILD_DIR/tests/chaos/chaos_test" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
echo
grep -E '^chaos: tasks=' "$log" || echo "chaos: no summary line (the run failed before its checks; see $log)"
exit "$status"
